"""SGLang's chat server with --tool-call-parser kimi_k2: a call whose arguments are not JSON text
('{{}') is answered as a tool call whose ``function.arguments`` is that text, which no JSON parser
reads, where SGLang's other detectors parse the arguments and keep a call that does not parse as
text:

- '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>
  {{}<|tool_call_end|><|tool_calls_section_end|>', non-streamed: a call get_weather with arguments
  '{{}'; streamed: the same.

Why: kimik2_detector.py ``detect_and_parse`` (line 164) hands the text between
<|tool_call_argument_begin|> and <|tool_call_end|> on as the call's parameters unread (196-201;
its pattern, 71-74, asks only for '{...}'), where base_format_detector.py ``parse_base_json`` (77)
takes parsed arguments and json.dumps them, and deepseekv31_detector.py ``detect_and_parse`` json.loads them (80) and answers the text as
content when that fails (85-88). The same function never checks the name against the request's
tools either (188-192: ``_parse_tool_call_id`` takes any 'functions.NAME:N'), where
``parse_base_json`` drops an undeclared name (86).

What the server calls (sglang 0.5.23, sglang/srt/entrypoints/openai/serving_chat.py): streamed,
``OpenAIServingChat._generate_chat_stream`` (2441-2805), which hands each chunk of the tokenizer
manager's ``generate_request`` to ``_generate_stream_content`` (919-1078), its text through
``_process_tool_call_stream`` (1005-1021, 3604-3756: ``parse_stream_chunk`` per delta and, on the
chunk carrying the finish reason, ``parse_stream_end``), then ``_check_for_unstreamed_tool_args``
(1023-1031, 3758-3833); whole, ``_handle_non_streaming_request`` (2807-2830),
``_build_chat_response`` (2832-3051) and ``_process_tool_calls`` (2954-2973, 3150-3279).

The server object is the real ``OpenAIServingChat(tokenizer_manager, TemplateManager())`` over the
published ``ServerArgs`` of the command line; only the tokenizer manager is a stand-in,
``ModelOutput``, which yields the model's output as the real one yields it to the chat server and
reads the server's flags with the manager's own ``config_value``. The output arrives in one batch,
the finish reason on a last, empty one. Not reproduced: the prompt's rendering and the tokenizer
(``_convert_to_internal_request``); the request keeps its response-parser defaults (no prefix, no
grammar) and the parser is made without a tokenizer, which this detector does not take
(function_call_parser.py 138-146).

Needs: sglang (0.5.23; no model, no GPU) and what its OpenAI serving module imports. Runs in an
empty folder; exits 1 while the non-streamed response has a call whose arguments are not JSON, 0
when every call's arguments parse.

Expected: no call, the output as content. The reference, transformers' response-parser rules as
textbound's oracles.tool_reference applies them (transformers 5.24.0), reads no call from it and
keeps the text as content.
"""
import asyncio
import json
import logging
import sys
from types import SimpleNamespace

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
from sglang.srt.managers.io_struct import GenerateReqInput
from sglang.srt.managers.tokenizer_manager import TokenizerManager
from sglang.srt.parser.template_manager import TemplateManager
from sglang.srt.runtime_context import get_context
from sglang.srt.server_args import ServerArgs

logging.disable(logging.WARNING)
FINISH = {"type": "stop", "matched": 0}  # the end-of-sequence stop, as FINISH_MATCHED_TOKEN.to_json gives it
MODEL = "moonshotai/Kimi-K2-Instruct"  # only named: the server never loads it here
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
OUTPUT = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
          "{{}<|tool_call_end|><|tool_calls_section_end|>")


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class ModelOutput:
    """The TokenizerManager as OpenAIServingChat reads it, its model generating `chunks`: no model,
    no sockets. It yields what the real one yields to the chat server (tokenizer_manager.py
    2505-2558 and 2626-2667, the text filled in at 2007-2014): per detokenized batch the text so
    far, the finish reason on the last; a non-streamed request gets the last alone."""

    tokenizer = None  # no prompt is rendered here, and these parsers' text paths do not read it
    config_value = TokenizerManager.config_value  # the server's flags, read from the published config

    def __init__(self, server_args: ServerArgs, chunks: list[str]):
        self.server_args, self.model_path, self.chunks = server_args, server_args.model_path, chunks
        # No architecture: resolve_chat_encoding_spec picks no chat encoder, the chat template's path.
        self.model_config = SimpleNamespace(hf_config=SimpleNamespace(architectures=[], model_type=None),
                                            get_default_sampling_params=dict)

    async def generate_request(self, adapted_request: GenerateReqInput, raw_request):
        texts = ["".join(self.chunks[:end]) for end in range(1, len(self.chunks) + 1)]
        for tokens, text in list(enumerate(texts, start=1))[0 if adapted_request.stream else -1:]:
            yield {"text": text, "output_ids": [], "meta_info": {
                "id": "repro", "finish_reason": FINISH if tokens == len(texts) else None, "prompt_tokens": 1,
                "weight_version": self.config_value("weight_version"), "num_retractions": 0,
                "reasoning_tokens": 0, "completion_tokens": tokens, "cached_tokens": 0}}


def chat_server(chunks: list[str], **flags) -> OpenAIServingChat:
    """The chat server `python -m sglang.launch_server --model-path MODEL` with `flags` starts, its
    model generating `chunks`."""
    server_args = ServerArgs(model_path=MODEL, **flags)
    get_context().set_server_args(server_args)  # what the launcher publishes before the server starts
    return OpenAIServingChat(ModelOutput(server_args, chunks), TemplateManager())


async def responses(server: OpenAIServingChat, **fields) -> tuple[dict, dict]:
    """(the streamed response's deltas joined, the non-streamed response's message) to one request
    with `fields`; calls as (name, arguments)."""
    messages = [{"role": "user", "content": "Hi"}]
    request = ChatCompletionRequest(model="m", messages=messages, stream=True, **fields)
    stream = server._generate_chat_stream(GenerateReqInput(text="", stream=True), request, None)
    streamed, calls = {"reasoning_content": "", "content": ""}, {}
    async for event in stream:
        payload = event.removeprefix("data: ").strip()
        for choice in [] if payload == "[DONE]" else json.loads(payload).get("choices", []):
            for field in streamed:
                streamed[field] += choice["delta"].get(field) or ""
            for call in choice["delta"].get("tool_calls") or []:
                name, arguments = calls.get(call["index"], (None, ""))
                calls[call["index"]] = (name or call["function"]["name"],
                                        arguments + (call["function"]["arguments"] or ""))
    response = await server._handle_non_streaming_request(
        GenerateReqInput(text=""), ChatCompletionRequest(model="m", messages=messages, **fields), None)
    whole = response.choices[0].message
    return ({**streamed, "tool_calls": list(calls.values())},
            {"reasoning_content": whole.reasoning_content or "", "content": whole.content or "",
             "tool_calls": [(call.function.name, call.function.arguments) for call in whole.tool_calls or []]})



streamed, whole = asyncio.run(responses(chat_server([OUTPUT, ""], tool_call_parser="kimi_k2"), tools=TOOLS))
print(f"kimi_k2 on {OUTPUT!r} in one batch")
print("  expected: no call, content", repr(OUTPUT), "(the reference)")
print("  actual:  ", whole["tool_calls"], "content", repr(whole["content"]), "(the non-streamed response);",
      streamed["tool_calls"], "content", repr(streamed["content"]), "(the streamed one)")
sys.exit(1 if not all(is_json(arguments) for _, arguments in whole["tool_calls"]) else 0)
