"""SGLang's tool-call and reasoning parsers behind textbound's JSON-lines protocol
(textbound/adapters/jsonl_engine.py): run by the python of an environment holding sglang, never
importing the harness.

    python engines/sglang/engine.py

- tools: per request the ``ReasoningParser`` and ``FunctionCallParser`` a server started with the
  format's ``--reasoning-parser`` and ``--tool-call-parser`` (PARSERS) makes, driven as its chat
  serving drives them: each delta goes through the reasoning parser's ``parse_stream_chunk``
  (``parse_stream_end`` at the finish), its normal text through the function-call parser's
  ``parse_stream_chunk`` (``parse_stream_end`` at the finish), then, at the finish, the server's own
  ``OpenAIServingChat._check_for_unstreamed_tool_args`` (the arguments the detector parsed but never
  streamed, sent as one more delta: a call streamed without arguments ends with ``{}``); the whole
  text through both ``parse_non_stream``. Call items become OpenAI deltas: a named item opens call
  ``tool_index`` with an id, its ``parameters`` are argument text. Without tools the server parses
  no calls unless the detector ``parses_without_tools`` (``_tool_call_parsing_active``): the text is
  content as it comes.
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

Server entry point: ``sglang.launch_server``'s OpenAI front end, ``OpenAIServingChat``: streamed,
``_process_reasoning_stream`` then ``_process_tool_call_stream`` per chunk, with ``flush`` (the
parsers' ``parse_stream_end``) and ``_check_for_unstreamed_tool_args`` on the chunk carrying the
finish reason; whole, the reasoning parser's ``parse_non_stream``, then the function-call parser's
where its ``has_tool_call`` sees a marker (``_process_tool_calls``);
the tokenizer ``get_tokenizer`` loads; the detokenizer manager's ``_decode_batch_token_id_output``
per scheduler batch. Not reproduced: the parsers are made without the server's tokenizer, the
request's prefix and its constrained flag (the server passes them; these detectors' text paths do
not read them).

    -> {"id": 3, "op": "parse_response", "text": "<tool_call>...", "format": "hermes", ...}
    <- {"id": 3, "result": {"role": "assistant", "content": null, "tool_calls": [...]}}
"""
from __future__ import annotations

import json
import logging
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

# The protocol loop is the vLLM engine's sibling: one loop serves every Python engine.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vllm"))

from protocol_loop import Handles, die_with_parent, serve, tokenizer_ops  # noqa: E402

import sglang  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402

# (--tool-call-parser, --reasoning-parser) a server of the format's models runs with.
PARSERS: dict[str, tuple[str, str | None]] = {
    "hermes": ("hermes", "qwen3"), "qwen3_coder": ("qwen3_coder", "qwen3"), "llama3_json": ("llama3", None),
    "mistral": ("mistral", "mistral"), "deepseek_r1": ("deepseekv3", "deepseek-r1"),
    "deepseek_v31": ("deepseekv31", "deepseek-v3"), "gpt_oss": ("gpt-oss", "gpt-oss"),
    "kimi_k2": ("kimi_k2", "kimi_k2"), "glm45": ("glm45", "glm45"), "minimax_m2": ("minimax-m2", "minimax"),
}


def call_deltas(calls) -> list[dict]:
    """SGLang's ToolCallItems as OpenAI deltas."""
    found = []
    for call in calls:
        piece = {"index": call.tool_index, "function": {"arguments": call.parameters or ""}}
        if call.name:
            piece.update(id=f"call_{uuid.uuid4().hex[:24]}", type="function")
            piece["function"]["name"] = call.name
        found.append({"tool_calls": [piece]})
    return found


def unstreamed_arguments(calls: FunctionCallParser, tools: list) -> list[dict]:
    """The delta the server sends after the finishing chunk's flush: its own
    ``_check_for_unstreamed_tool_args`` (it reads the parser, the request's model and the chunk's id), its SSE
    chunk read back as a protocol delta; [] when it sends none."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    request = ChatCompletionRequest(model=REQUEST, messages=[{"role": "user", "content": "Hi"}], tools=tools or None)
    server = object.__new__(OpenAIServingChat)  # its __init__ needs a running tokenizer manager
    chunk = server._check_for_unstreamed_tool_args(calls, {"meta_info": {"id": REQUEST}}, request, 0, created=0)
    if chunk is None:
        return []
    delta = json.loads(chunk.removeprefix("data: "))["choices"][0]["delta"]
    return [{"tool_calls": [{"index": call["index"], "function": {"arguments": call["function"]["arguments"]}}]}
            for call in delta["tool_calls"]]


class Parsing:
    """One request's parsers, as the server makes them."""

    def __init__(self, r: dict):
        if r["format"] not in PARSERS:
            raise ValueError(f"SGLang has no parser for format {r['format']!r}")
        tool_parser, reasoning_parser = PARSERS[r["format"]]
        self.tools = [Tool.model_validate(tool) for tool in r["tools"] or []]
        # The server's _tool_call_parsing_active: with no tools declared, only a detector that parses
        # without tools reads calls; otherwise the output is content as it comes.
        self.parsing_calls = bool(self.tools) or FunctionCallParser.ToolCallParserEnum[tool_parser].parses_without_tools()
        self.reasoning = (ReasoningParser(reasoning_parser, stream_reasoning=True,
                                          force_reasoning=r["starts_in_reasoning"] or None,
                                          tool_call_parser_active=self.parsing_calls)
                          if reasoning_parser and r["reasoning"] else None)
        self.calls = FunctionCallParser(self.tools, tool_parser)

    def feed(self, text: str, final: bool) -> list[dict]:
        reasoning, normal = self.reasoning.parse_stream_chunk(text) if self.reasoning else (None, text)
        if final and self.reasoning:
            end_reasoning, end_normal = self.reasoning.parse_stream_end()
            reasoning, normal = (reasoning or "") + (end_reasoning or ""), (normal or "") + (end_normal or "")
        deltas = [{"reasoning_content": reasoning}] if reasoning else []
        if not self.parsing_calls:
            return deltas + ([{"content": normal}] if normal else [])
        content, calls = self.calls.parse_stream_chunk(normal) if normal else ("", [])
        if final:
            end_content, end_calls = self.calls.parse_stream_end()
            content, calls = content + (end_content or ""), [*calls, *end_calls]
        finish = unstreamed_arguments(self.calls, self.tools) if final else []
        return deltas + ([{"content": content}] if content else []) + call_deltas(calls) + finish

    def whole(self, text: str) -> dict:
        reasoning, normal = self.reasoning.parse_non_stream(text) if self.reasoning else (None, text)
        normal = normal or ""
        # The server parses calls only where the detector sees a call's marker (_process_tool_calls).
        marked = self.parsing_calls and self.calls.has_tool_call(normal)
        content, calls = self.calls.parse_non_stream(normal) if marked else (normal, [])
        message = {"role": "assistant", "content": content or (None if calls else content),
                   "reasoning_content": reasoning}
        if calls:
            message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                                      "function": {"name": call.name, "arguments": call.parameters}}
                                     for call in calls]
        return message


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
