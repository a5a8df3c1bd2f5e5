"""An engine for the JSON-lines subprocess protocol (textbound/adapters/jsonl_engine.py) with impl behind
every op: textbound.adapters.serve serving impl, with the bugs and announcements the tests need.

    TEXTBOUND_ENGINE_CMD="python tests/engines/echo_engine.py" textbound check --impl textbound.adapters.jsonl_engine

Options: ``--ops encode,decode,...`` answers hello with only those ops (the others stay served);
``--bug drop-last`` drops the last id of every encode of text with a digit (a broken engine the
checks must catch); ``--bug crash-on-decode`` exits in the middle of a decode.

    -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
    <- {"id": 3, "result": [13048]}
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # impl/, when run as a script from anywhere

from textbound import impl  # noqa: E402
from textbound.adapters.serve import Served, protocol_stdout, serve  # noqa: E402


class Echo(Served):
    def __init__(self, bug: str | None, ops: list[str] | None):
        super().__init__(impl, "echo (impl)")
        self.bug, self.announced = bug, ops

    def handle(self, request: dict):
        result = super().handle(request)
        if request["op"] == "hello" and self.announced is not None:
            result["ops"] = self.announced
        return result

    def encode(self, r):
        ids = super().encode(r)
        if self.bug == "drop-last" and any(c.isdigit() for c in r["text"]) and len(ids) > 1:
            ids = ids[:-1]
        return ids

    def decode(self, r):
        if self.bug == "crash-on-decode":
            sys.exit(3)
        return super().decode(r)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated ops to announce in hello (default: all)")
    parser.add_argument("--bug", choices=["drop-last", "crash-on-decode"])
    options = parser.parse_args()
    serve(Echo(options.bug, options.ops.split(",") if options.ops else None), sys.stdin.buffer, protocol_stdout())


if __name__ == "__main__":
    main()
