"""SGLang's chat server with --reasoning-parser gpt-oss, streaming: when '<|end|>' that closes the
analysis message arrives cut between chunks ('<|en', 'd|>'), the marker's text is streamed as
reasoning: reasoning 'x<|end|>', where the non-streamed response to the same output has reasoning
'x'. (A gpt-oss tokenizer has '<|end|>' as one token, so a server cuts it only where chunks are not
token-aligned; SGLang's streaming parsers are written to hold such partial markers back.)

What the server calls (sglang 0.5.23, sglang/srt/entrypoints/openai/serving_chat.py): streamed,
``OpenAIServingChat._generate_chat_stream`` (2441-2805), which hands each chunk of the tokenizer
manager's ``generate_request`` to ``_generate_stream_content`` (919-1078), its reasoning through
``_process_reasoning_stream`` (975-982, 3302-3333: the ReasoningParser made with
``request.stream_reasoning`` and ``template_manager.force_reasoning or
_get_reasoning_from_request``, ``parse_stream_chunk`` per delta, ``parse_stream_end`` on the chunk
carrying the finish reason); whole, ``_handle_non_streaming_request`` (2807-2830) and
``_build_chat_response`` (2832-3051; ``parse_non_stream`` at 2930-2944).

ReasoningParser forces reasoning for gpt-oss whatever the request says (reasoning_parser.py
2337-2343), and a gpt-oss model selects no chat encoder of its own (chat_encoding.py 20-59), so its
output goes through these reasoning parser calls.

The server object is the real ``OpenAIServingChat(tokenizer_manager, TemplateManager())`` over the
published ``ServerArgs`` of the command line; only the tokenizer manager is a stand-in,
``ModelOutput``, which yields the model's output as the real one yields it to the chat server and
reads the server's flags with the manager's own ``config_value``. Not reproduced: the prompt's
rendering and the tokenizer (``_convert_to_internal_request``). The request keeps its
response-parser defaults (no prefix, no grammar), which only the response-template detectors read
(function_call_parser.py 142-146, reasoning_parser.py 2399-2406), and the parsers are made without
a tokenizer, which they take only where their detector's signature asks for one
(function_call_parser.py 138-141, reasoning_parser.py 2387-2390; these detectors do not).

Needs: sglang (0.5.23; no model, no GPU) and what its OpenAI serving module imports. Runs in an
empty folder; exits 1 while the bug is there, 0 when it is gone.

Expected: the non-streamed response: reasoning 'x', content ''; the reference, transformers'
response-parser rules as textbound's oracles.tool_reference applies them (transformers 5.24.0),
answers the same (REFERENCE).
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
MODEL = "openai/gpt-oss-20b"  # only named: the server never loads it here
CHUNKS = ["<|channel|>", "analysis", "<|message|>", "x", "<|en", "d|>"]
# oracles.tool_reference, transformers 5.24.0
REFERENCE = {"reasoning_content": "x", "content": "", "tool_calls": []}


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


streamed, whole = asyncio.run(responses(chat_server(CHUNKS, reasoning_parser="gpt-oss")))
print("output:  ", repr("".join(CHUNKS)), "in chunks", CHUNKS)
print("expected:", whole, "(the non-streamed response; the reference:", REFERENCE, ")")
print("actual:  ", streamed, "(the streamed response's deltas joined)")
sys.exit(1 if streamed != whole else 0)
