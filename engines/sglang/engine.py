"""SGLang's tool-call and reasoning parsers behind textbound's JSON-lines protocol
(textbound/adapters/jsonl_engine.py): run by the python of an environment holding sglang, never
importing the harness.

    python engines/sglang/engine.py

- tools: per request the real ``OpenAIServingChat(tokenizer_manager, TemplateManager())`` of a
  server started with the format's ``--tool-call-parser`` and ``--reasoning-parser`` (PARSERS; no
  reasoning parser when the request asks for no reasoning), over the published ``ServerArgs`` of
  that command line; only the tokenizer manager is a stand-in, ``ModelOutput``, which yields the
  model's output as the real one yields it to the chat server (per detokenized batch the text so
  far, the finish reason on the last). Streamed, each ``parser_feed`` is one such batch handed to
  the server's own ``_generate_chat_stream``, run until it waits for the next; its SSE chunks read
  back as protocol deltas (the last feed carries the finish reason: the parsers' flush and
  ``_check_for_unstreamed_tool_args`` run there, as in the server). Whole, the final batch through
  ``_handle_non_streaming_request``, its message read back. The request is a chat completion of
  the case's tools whose reasoning switch (``starts_in_reasoning``) is what the server's
  ``_get_reasoning_from_request`` reads for its reasoning detector's ``reasoning_default``
  (THINKING_FIELDS); a detector whose reasoning is always on ignores it, as the server does.
- tokenizer: the family's tokenizer as SGLang's server loads it (``get_tokenizer``), encode/decode
  as the tokenizer manager calls them.
- detokenizer: one request through ``DetokenizerManager._decode_batch_token_id_output``, fed as the
  scheduler feeds it: the first batch carries the prompt's last INIT_INCREMENTAL_DETOKENIZATION_OFFSET
  ids as surrounding context (``read_offset`` past them) and the first ids, later batches the new
  ids alone; ``flush`` is the batch that finishes the request (a length finish, so no stop to trim).
  The manager is made without its sockets, event loop and server arguments (its decode reads only
  the tokenizer and the fields set in ``detokenizer_manager``); the module is imported by the first
  family's ``load``, and where it cannot import (it needs torch and the server's packages), ``load``
  answers with that reason.

Server entry point: ``sglang.launch_server``'s OpenAI front end, ``OpenAIServingChat`` itself:
streamed, ``_generate_chat_stream`` fed batch by batch (its ``_generate_stream_content``:
``_process_reasoning_stream``, ``_process_tool_call_stream``, and on the batch carrying the finish
reason the parsers' ``parse_stream_end`` and ``_check_for_unstreamed_tool_args``); whole,
``_handle_non_streaming_request`` (``_build_chat_response``, ``_process_tool_calls``); the tokenizer
``get_tokenizer`` loads; the detokenizer manager's ``_decode_batch_token_id_output`` per scheduler
batch. Not reproduced: the prompt's rendering and its tokenizer (``_convert_to_internal_request``);
the parsers are made without a tokenizer, which they take only where their detector's signature
asks for one, and the request keeps its response-parser defaults (no prefix, no grammar), which
only the response-template detectors read.

    -> {"id": 3, "op": "parse_response", "text": "<tool_call>...", "format": "hermes", ...}
    <- {"id": 3, "result": {"role": "assistant", "content": "", "tool_calls": [...]}}
"""
from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from types import SimpleNamespace

# The protocol loop is the vLLM engine's sibling: one loop serves every Python engine.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vllm"))

from protocol_loop import Handles, die_with_parent, serve, tokenizer_ops  # noqa: E402

import sglang  # noqa: E402

# (--tool-call-parser, --reasoning-parser) a server of the format's models runs with.
PARSERS: dict[str, tuple[str, str | None]] = {
    "hermes": ("hermes", "qwen3"), "qwen3_coder": ("qwen3_coder", "qwen3"), "llama3_json": ("llama3", None),
    "mistral": ("mistral", "mistral"), "deepseek_r1": ("deepseekv3", "deepseek-r1"),
    "deepseek_v31": ("deepseekv31", "deepseek-v3"), "gpt_oss": ("gpt-oss", "gpt-oss"),
    "kimi_k2": ("kimi_k2", "kimi_k2"), "glm45": ("glm45", "glm45"), "minimax_m2": ("minimax-m2", "minimax"),
}
MODEL = "textbound"  # only named: the server never loads it here
FINISH = {"type": "stop", "matched": 0}  # the end-of-sequence stop, as FINISH_MATCHED_TOKEN.to_json gives it
MESSAGES = [{"role": "user", "content": "Hi"}]  # the prompt is not rendered: any conversation will do
# The request fields that switch reasoning on or off, per value of the server's reasoning detector's
# reasoning_default, as _get_reasoning_from_request reads them with no template config (a template
# manager that loaded no chat template has none): a toggle in chat_template_kwargs, or Mistral's
# reasoning_effort. A mode not listed ("always") reads nothing from the request.
THINKING_FIELDS = {
    "thinking": lambda on: {"chat_template_kwargs": {"thinking": on}},
    "enable_thinking": lambda on: {"chat_template_kwargs": {"enable_thinking": on}},
    "explicit_thinking": lambda on: {"chat_template_kwargs": {"thinking": on}},
    "explicit_enable_thinking": lambda on: {"chat_template_kwargs": {"enable_thinking": on}},
    "mistral": lambda on: {"reasoning_effort": "high" if on else "none"},
}
LOOP = asyncio.new_event_loop()  # the chat servers' coroutines, run a batch at a time


class ModelOutput:
    """The TokenizerManager as OpenAIServingChat reads it, its model's output fed from outside: no
    model, no sockets. It yields what the real one yields to the chat server (tokenizer_manager.py's
    _wait_one_response, the text filled in by _handle_batch_output): per detokenized batch the text
    so far, the finish reason on the last; a non-streamed request reads the first output it is given,
    which the caller makes the last. ``starved`` resolves when the server waits for a batch not fed yet."""

    tokenizer = None  # no prompt is rendered here, and these parsers' text paths do not read it

    def __init__(self, server_args):
        self.server_args, self.model_path = server_args, server_args.model_path
        # No architecture: resolve_chat_encoding_spec picks no chat encoder, the chat template's path.
        self.model_config = SimpleNamespace(hf_config=SimpleNamespace(architectures=[], model_type=None),
                                            get_default_sampling_params=dict)
        self.text, self.batches, self.outputs = "", 0, []
        self.starved, self.fed = LOOP.create_future(), None

    def config_value(self, name: str):
        """The server's flags, read from the published config by the manager's own method."""
        from sglang.srt.managers.tokenizer_manager import TokenizerManager
        return TokenizerManager.config_value(self, name)

    def feed(self, text: str, final: bool) -> None:
        self.text, self.batches = self.text + text, self.batches + 1
        self.outputs.append({"text": self.text, "output_ids": [], "meta_info": {
            "id": REQUEST, "finish_reason": FINISH if final else None, "prompt_tokens": 1,
            "weight_version": self.config_value("weight_version"), "num_retractions": 0,
            "reasoning_tokens": 0, "completion_tokens": self.batches, "cached_tokens": 0}})
        self.starved = LOOP.create_future()
        if self.fed is not None and not self.fed.done():
            self.fed.set_result(None)

    async def generate_request(self, adapted_request, raw_request):
        while True:
            while not self.outputs:
                if not self.starved.done():
                    self.starved.set_result(None)
                self.fed = LOOP.create_future()
                await self.fed
            output = self.outputs.pop(0)
            yield output
            if output["meta_info"]["finish_reason"]:
                return


def stream_deltas(event: str) -> list[dict]:
    """One SSE event of the server's stream as protocol deltas; an error event raised."""
    payload = event.removeprefix("data: ").strip()
    if payload == "[DONE]":
        return []
    chunk = json.loads(payload)
    if "error" in chunk:
        raise RuntimeError(f"SGLang's stream sent an error: {chunk['error'].get('message', chunk['error'])}")
    found = []
    for choice in chunk.get("choices", []):
        delta = choice["delta"]
        found += [{field: delta[field]} for field in ("reasoning_content", "content") if delta.get(field)]
        for call in delta.get("tool_calls") or []:
            piece = {"index": call["index"], "function": {"arguments": call["function"].get("arguments") or ""}}
            if call["function"].get("name"):
                piece.update(id=call["id"], type="function")
                piece["function"]["name"] = call["function"]["name"]
            found.append({"tool_calls": [piece]})
    return found


class Parsing:
    """One request to the chat server a format's command line starts."""

    def __init__(self, r: dict):
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
        from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
        from sglang.srt.parser.template_manager import TemplateManager
        from sglang.srt.server_args import ServerArgs
        if r["format"] not in PARSERS:
            raise ValueError(f"SGLang has no parser for format {r['format']!r}")
        tool_parser, reasoning_parser = PARSERS[r["format"]]
        self.server_args = ServerArgs(model_path=MODEL, tool_call_parser=tool_parser,
                                      reasoning_parser=reasoning_parser if r["reasoning"] else None)
        self.publish()
        self.model = ModelOutput(self.server_args)
        self.server = OpenAIServingChat(self.model, TemplateManager())
        detector = self.server._reasoning_detector
        thinking = THINKING_FIELDS.get(detector.reasoning_default) if detector is not None else None
        self.fields = {"tools": r["tools"] or None, **(thinking(bool(r["starts_in_reasoning"])) if thinking else {})}
        self.request = ChatCompletionRequest(model=MODEL, messages=MESSAGES, **self.fields)
        self.stream, self.next_event, self.finished = None, None, False

    def publish(self) -> None:
        """What the launcher publishes before its server starts; again before each use, since
        another request's server may have published its own since."""
        from sglang.srt.runtime_context import get_context
        get_context().set_server_args(self.server_args)

    def feed(self, text: str, final: bool) -> list[dict]:
        if self.stream is None:
            from sglang.srt.managers.io_struct import GenerateReqInput
            streamed = self.request.model_copy(update={"stream": True})
            self.stream = self.server._generate_chat_stream(GenerateReqInput(text="", stream=True), streamed, None)
        elif self.finished:
            raise ValueError("this stream has finished: no more text can be fed")
        self.publish()
        self.model.feed(text, final)
        return LOOP.run_until_complete(self.events_until_starved())

    async def events_until_starved(self) -> list[dict]:
        """The deltas of the events the server sends until it waits for the next batch or ends."""
        found = []
        while True:
            if self.next_event is None:
                self.next_event = asyncio.ensure_future(anext(self.stream))
            await asyncio.wait({self.next_event, self.model.starved}, return_when=asyncio.FIRST_COMPLETED)
            if not self.next_event.done():
                return found
            try:
                event = self.next_event.result()
            except StopAsyncIteration:
                self.finished = True
                return found
            self.next_event = None
            found += stream_deltas(event)

    def whole(self, text: str) -> dict:
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionResponse
        from sglang.srt.managers.io_struct import GenerateReqInput
        self.publish()
        self.model.feed(text, final=True)
        response = LOOP.run_until_complete(
            self.server._handle_non_streaming_request(GenerateReqInput(text=""), self.request, None))
        if not isinstance(response, ChatCompletionResponse):
            body = getattr(response, "body", None)
            raise RuntimeError(f"SGLang's server answered an error: {body.decode() if body else response}")
        message = response.choices[0].message
        found = {"role": "assistant", "content": message.content, "reasoning_content": message.reasoning_content}
        if message.tool_calls:
            found["tool_calls"] = [{"id": call.id, "type": "function",
                                    "function": {"name": call.function.name, "arguments": call.function.arguments}}
                                   for call in message.tool_calls]
        return found


REQUEST = "textbound"  # the request id of every detokenized stream (one per manager)
SPACES_BETWEEN_SPECIAL_TOKENS = True  # SGLang's sampling default


def detokenizer_manager(tokenizer):
    """A DetokenizerManager holding what its incremental decode reads, with the server's defaults."""
    from sglang.srt.managers.detokenizer_manager import DetokenizerManager
    manager = object.__new__(DetokenizerManager)  # its __init__ opens the server's sockets
    manager.tokenizer, manager.vocab_size, manager.decode_status = tokenizer, len(tokenizer), {}
    manager.disable_tokenizer_batch_decode, manager.is_tool_call_parser_gpt_oss = False, False
    manager.tool_close_token_ids = set()
    return manager


class Detokenizer:
    """One request's stream through SGLang's detokenizer manager."""

    def __init__(self, tokenizer, skip_special_tokens: bool, prompt_ids: list[int]):
        from sglang.srt.managers.schedule_batch import INIT_INCREMENTAL_DETOKENIZATION_OFFSET
        self.manager, self.skip = detokenizer_manager(tokenizer), skip_special_tokens
        self.context = list(prompt_ids)[-INIT_INCREMENTAL_DETOKENIZATION_OFFSET:]
        self.read_offset = len(self.context)
        # SGLang never streams the prompt: what was shown of it is its decode.
        self.prompt_text = tokenizer.decode(prompt_ids, skip_special_tokens=skip_special_tokens)
        self.text = ""

    def step(self, ids: list[int], finished: bool) -> str:
        batch = SimpleNamespace(rids=[REQUEST], decoded_texts=[""], decode_ids=[self.context + list(ids)],
                                read_offsets=[self.read_offset], finished_reasons=[{"type": "length"} if finished else None],
                                no_stop_trim=[False], skip_special_tokens=[self.skip],
                                spaces_between_special_tokens=[SPACES_BETWEEN_SPECIAL_TOKENS])
        self.context = []  # the manager keeps the ids it was sent
        delta = self.manager._decode_batch_token_id_output(batch)[0]
        self.text += delta
        return delta


class Family:
    """The family process's tokenizer, loaded as the server loads it."""

    def __init__(self):
        self.tokenizer = None

    def load(self, r: dict) -> None:
        import sglang.srt.managers.detokenizer_manager  # noqa: F401 - where it cannot import, no family loads
        from sglang.srt.utils.hf_transformers.tokenizer import get_tokenizer
        self.tokenizer = get_tokenizer(r["path"])

    def tok(self):
        if self.tokenizer is None:
            raise ValueError("no family loaded: this request needs a family's process")
        return self.tokenizer


def ops() -> dict:
    handles, family = Handles(), Family()

    def detokenizer_new(r: dict) -> dict:
        made = Detokenizer(family.tok(), r["skip_special_tokens"], r["prompt_ids"])
        return {"handle": handles.keep(made), "prompt_text": made.prompt_text}

    answers = {
        "load": family.load,
        **tokenizer_ops(family.tok),
        "detokenizer_new": detokenizer_new,
        "detokenizer_add": lambda r: handles[r["handle"]].step(r["ids"], finished=False),
        "detokenizer_flush": lambda r: handles[r["handle"]].step([], finished=True),
        "detokenizer_text": lambda r: handles[r["handle"]].text,
        "parser_new": lambda r: handles.keep(Parsing(r)),
        "parser_feed": lambda r: handles[r["handle"]].feed(r["text"], r["final"]),
        "parse_response": lambda r: Parsing(r).whole(r["text"]),
        "release": lambda r: handles.release(r["handles"]),
    }
    answers["hello"] = lambda r: {"engine": "sglang", "version": sglang.__version__,
                                  "ops": sorted(set(answers) - {"hello"})}
    return answers


def main() -> None:
    die_with_parent()
    logging.disable(logging.WARNING)
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # anything SGLang prints must not reach the protocol's channel
    serve(sys.stdin, protocol_out, ops())


if __name__ == "__main__":
    main()
