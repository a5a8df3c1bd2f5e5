"""SGLang's tool-call and reasoning parsers behind textbound's JSON-lines protocol
(textbound/adapters/jsonl_engine.py): run by the python of an environment holding sglang, never
importing the harness.

    python engines/sglang/engine.py

- tools: per request the ``ReasoningParser`` and ``FunctionCallParser`` a server started with the
  format's ``--reasoning-parser`` and ``--tool-call-parser`` (PARSERS) makes, driven as its chat
  serving drives them: each delta goes through the reasoning parser's ``parse_stream_chunk``
  (``parse_stream_end`` at the finish), its normal text through the function-call parser's
  ``parse_stream_chunk`` (``parse_stream_end`` at the finish); the whole text through both
  ``parse_non_stream``. Call items become OpenAI deltas: a named item opens call ``tool_index``
  with an id, its ``parameters`` are argument text. Without tools the server parses no calls.

    -> {"id": 3, "op": "parse_response", "text": "<tool_call>...", "format": "hermes", ...}
    <- {"id": 3, "result": {"role": "assistant", "content": null, "tool_calls": [...]}}
"""
from __future__ import annotations

import logging
import sys
import uuid
from pathlib import Path

# The protocol loop is the vLLM engine's sibling: one loop serves every Python engine.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vllm"))

from protocol_loop import Handles, die_with_parent, serve  # noqa: E402

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


class Parsing:
    """One request's parsers, as the server makes them."""

    def __init__(self, r: dict):
        if r["format"] not in PARSERS:
            raise ValueError(f"SGLang has no parser for format {r['format']!r}")
        tool_parser, reasoning_parser = PARSERS[r["format"]]
        self.reasoning = (ReasoningParser(reasoning_parser, stream_reasoning=True,
                                          force_reasoning=r["starts_in_reasoning"] or None)
                          if reasoning_parser and r["reasoning"] else None)
        tools = [Tool.model_validate(tool) for tool in r["tools"] or []]
        self.calls = FunctionCallParser(tools, tool_parser)

    def feed(self, text: str, final: bool) -> list[dict]:
        reasoning, normal = self.reasoning.parse_stream_chunk(text) if self.reasoning else (None, text)
        if final and self.reasoning:
            end_reasoning, end_normal = self.reasoning.parse_stream_end()
            reasoning, normal = (reasoning or "") + (end_reasoning or ""), (normal or "") + (end_normal or "")
        deltas = [{"reasoning_content": reasoning}] if reasoning else []
        content, calls = self.calls.parse_stream_chunk(normal) if normal else ("", [])
        if final:
            end_content, end_calls = self.calls.parse_stream_end()
            content, calls = content + (end_content or ""), [*calls, *end_calls]
        return deltas + ([{"content": content}] if content else []) + call_deltas(calls)

    def whole(self, text: str) -> dict:
        reasoning, normal = self.reasoning.parse_non_stream(text) if self.reasoning else (None, text)
        content, calls = self.calls.parse_non_stream(normal or "")
        message = {"role": "assistant", "content": content or (None if calls else content),
                   "reasoning_content": reasoning}
        if calls:
            message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                                      "function": {"name": call.name, "arguments": call.parameters}}
                                     for call in calls]
        return message


def ops() -> dict:
    handles = Handles()
    answers = {
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
