"""SGLang's chat server with --tool-call-parser llama3 (and mistral), streaming: a call's name is
streamed before its arguments, and when the call object has no arguments (or never finishes) a
real client is left with arguments '' (not JSON text), even after the server's finish step, where
the non-streamed response to the same output has a call with arguments '{}' (or no call, the text
kept as content; or, Mistral's, the call with its arguments):

- '{"name": "f"}' (a complete call without "arguments"/"parameters"): streamed f with arguments '';
  non-streamed f with arguments '{}'.
- '<|python_tag|>{"name": "f"' (an unfinished object): streamed f with arguments ''; non-streamed
  no call, content '{"name": "f"'.
- --tool-call-parser mistral, text then '[TOOL_CALLS] [{"name": ..., "arguments": {...}}]' in one
  chunk, the finish on an empty one: streamed the name with arguments ''; non-streamed the call with
  its arguments. The Mistral detector hands the JSON array to the same base
  ``parse_streaming_increment`` (mistral_detector.py 193).

Why the finish step sends nothing: base_format_detector.py ``parse_streaming_increment`` sends the
name with parameters '' (lines 244-269) and records the call in ``prev_tool_call_arr`` only when it
has arguments (lines 273-313), and ``_check_for_unstreamed_tool_args`` returns None while
``prev_tool_call_arr`` is empty (serving_chat.py 3758-3781). (Kimi K2's call cut after
``<|tool_call_argument_begin|>`` gets '{}' from that finish step: a real client sees JSON
arguments there.)

What the server calls (sglang 0.5.23, sglang/srt/entrypoints/openai/serving_chat.py): streamed,
``OpenAIServingChat._generate_chat_stream`` (2441-2805), which hands each chunk of the tokenizer
manager's ``generate_request`` to ``_generate_stream_content`` (919-1078), its text through
``_process_tool_call_stream`` (1005-1021, 3604-3756: the FunctionCallParser of the request's tools,
``parse_stream_chunk`` per delta and, on the chunk carrying the finish reason (``flush``),
``parse_stream_end``), then ``_check_for_unstreamed_tool_args`` (1023-1031, 3758-3833); whole,
``_handle_non_streaming_request`` (2807-2830), ``_build_chat_response`` (2832-3051) and
``_process_tool_calls`` (2954-2973, 3150-3279: ``parse_non_stream`` where ``has_tool_call`` sees a
marker).

The server object is the real ``OpenAIServingChat(tokenizer_manager, TemplateManager())`` over the
published ``ServerArgs`` of the command line; only the tokenizer manager is a stand-in,
``ModelOutput``, which yields the model's output as the real one yields it to the chat server and
reads the server's flags with the manager's own ``config_value``. Not reproduced: the prompt's
rendering and the tokenizer (``_convert_to_internal_request``). The request keeps its
response-parser defaults (no prefix, no grammar), which only the response-template detectors read
(function_call_parser.py 142-146), and the parser is made without a tokenizer, which it takes only
where its detector's signature asks for one (function_call_parser.py 138-141; Llama32Detector and
MistralDetector do not).

Needs: sglang (0.5.23; no model, no GPU) and what its OpenAI serving module imports. Runs in an
empty folder; exits 1 while a streamed call differs from the non-streamed response's calls, 0 when
they agree.

Expected: the server's own non-streamed response to the same output. The reference, transformers'
response-parser rules as textbound's oracles.tool_reference applies them (transformers 5.24.0),
answers the same calls (for the unfinished output no call, all of the text content; for the
complete one f({})).
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
MODEL = "meta-llama/Llama-3.1-8B-Instruct"  # only named: the server never loads it here
F = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
DECIDE = [{"type": "function", "function": {"name": "make_next_step_decision", "parameters": {
    "type": "object", "properties": {"decision": {"type": "string"}, "content": {"type": "string"}}}}}]
MISTRAL_OUTPUT = ('Here is some text before the tool call: [TOOL_CALLS] [{"name":"make_next_step_decision", '
                  '"arguments":{"decision":"ANSWER", "content":"The answer is 42"}}]')
# (--tool-call-parser, the request's tools, the output in the chunks a server streams (the last, empty,
# carries the finish reason), the reference's calls: oracles.tool_reference, transformers 5.24.0)
CASES = [
    ("llama3", F, ["<|python_tag|>", '{"name": "f"'], []),
    ("llama3", F, ['{"name": "f"}'], [("f", {})]),
    ("mistral", DECIDE, [MISTRAL_OUTPUT, ""],
     [("make_next_step_decision", {"decision": "ANSWER", "content": "The answer is 42"})]),
]


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



failed = False
for parser, tools, chunks, reference in CASES:
    streamed, whole = asyncio.run(responses(chat_server(chunks, tool_call_parser=parser), tools=tools))
    print(f"{parser} on {''.join(chunks)!r} in chunks {chunks}")
    print("  expected:", whole["tool_calls"], "(calls of the non-streamed response; content", repr(whole["content"]),
          "; the reference's calls:", reference, ")")
    print("  actual:  ", streamed["tool_calls"], "(calls of the streamed response)")
    failed |= streamed["tool_calls"] != whole["tool_calls"]
sys.exit(1 if failed else 0)
