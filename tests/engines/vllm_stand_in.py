"""A stand-in for vLLM's engine side (engines/vllm/engine.py) in the tool-parser ops alone, answering
as a server started without a reasoning parser would: impl's parse with reasoning off, so reasoning
text comes back as content. The tools checks' second oracle (textbound/checks/tools_vllm.py) must
record that as an oracle disagreement, never as impl's divergence.

    stand-in-python tests/engines/vllm_stand_in.py ENGINE_SCRIPT --tools-base DIR   # the arguments are ignored

``--exit-on-parse`` makes it exit in the middle of a parse (a crashing engine: an oracle failure).
``gpt_oss`` is refused as the real engine refuses it (REFUSED_FORMATS): no opinion.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "engines" / "vllm")]

from textbound import impl  # noqa: E402
from protocol_loop import Handles, serve  # noqa: E402


def main() -> None:
    handles = Handles()
    crash = "--exit-on-parse" in sys.argv

    def parsed(r: dict) -> dict:
        if crash:
            sys.exit(3)
        if r["format"] == "gpt_oss":
            raise ValueError("format 'gpt_oss' not provided: the stand-in has no Harmony parser")
        return impl.parse_response(r["text"], r["format"], tools=r["tools"], reasoning=False)

    ops = {
        "parser_new": lambda r: handles.keep(impl.OutputParser(r["format"], tools=r["tools"], reasoning=False)),
        "parser_feed": lambda r: handles[r["handle"]].feed(r["text"], r["final"]),
        "parse_response": parsed,
        "release": lambda r: handles.release(r["handles"]),
    }
    ops["hello"] = lambda r: {"engine": "vllm stand-in", "version": "0", "ops": sorted(ops)}
    serve(sys.stdin, sys.stdout, ops)


if __name__ == "__main__":
    main()
