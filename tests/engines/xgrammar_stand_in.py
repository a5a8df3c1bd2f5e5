"""A stand-in for xgrammar's engine side (engines/xgrammar/engine.py): impl's Constraint behind the
constraint ops, compiled from the request's schema when it carries one (impl's regex of it, where
xgrammar would run its own converter) and from its pattern otherwise. Like xgrammar's bitmask, its
allowed ids include the end-of-sequence token where the pattern may end. ``constraint_source``
(the stand-in's own op) answers what a constraint was built from, for the adapter's tests.

    python tests/engines/xgrammar_stand_in.py

    -> {"id": 3, "op": "constraint_new", "pattern": "(?:(?:true|false))", "schema": {"type": "boolean"}}
    <- {"id": 3, "result": 1}
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "engines" / "vllm")]

from textbound import impl  # noqa: E402
from protocol_loop import Handles, serve  # noqa: E402


class StandIn:
    def __init__(self, tokenizer, request: dict):
        self.source = {"pattern": request["pattern"], "schema": request.get("schema")}
        pattern = impl.json_schema_to_regex(request["schema"]) if request.get("schema") else request["pattern"]
        self.constraint, self.eos = impl.Constraint(pattern, tokenizer), tokenizer.eos_token_id

    def state_after(self, ids: list[int]):
        state = self.constraint.start()
        for token in ids:
            state = self.constraint.advance(state, token)
        return state

    def allowed(self, ids: list[int]) -> list[int]:
        state = self.state_after(ids)
        ending = [self.eos] if self.eos is not None and self.constraint.is_complete(state) else []
        return sorted(self.constraint.allowed_tokens(state)) + ending


def main() -> None:
    handles, family = Handles(), {}
    ops = {
        "load": lambda r: family.update(tokenizer=impl.Tokenizer.from_dir(r["path"])),
        "constraint_new": lambda r: handles.keep(StandIn(family["tokenizer"], r)),
        "constraint_start": lambda r: [],
        "constraint_advance": lambda r: (handles[r["handle"]].state_after([*r["state"], r["token"]]),
                                         [*r["state"], r["token"]])[1],
        "constraint_allowed": lambda r: handles[r["handle"]].allowed(r["state"]),
        "constraint_complete": lambda r: handles[r["handle"]].constraint.is_complete(
            handles[r["handle"]].state_after(r["state"])),
        "constraint_source": lambda r: handles[r["handle"]].source,
        "release": lambda r: handles.release(r["handles"]),
    }
    ops["hello"] = lambda r: {"engine": "xgrammar stand-in", "version": "0", "ops": sorted(ops)}
    serve(sys.stdin, sys.stdout, ops)


if __name__ == "__main__":
    main()
