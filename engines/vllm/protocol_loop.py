"""The engine side of textbound's JSON-lines protocol, with nothing of the engine or the harness in it:
read a request per line, answer it with ``result`` or ``error``.

    >>> import io
    >>> answers = io.StringIO()
    >>> serve(io.StringIO('{"id": 1, "op": "twice", "n": 2}\\n{"id": 2, "op": "nope"}\\n'), answers,
    ...       {"twice": lambda request: 2 * request["n"]})
    >>> answers.getvalue().splitlines()
    ['{"id": 1, "result": 4}', '{"id": 2, "error": {"type": "ValueError", "message": "unknown op \\'nope\\'"}}']
"""
from __future__ import annotations

import ctypes
import itertools
import json
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # prctl's option: the signal this process gets when its parent dies


def error_type(exc: BaseException) -> str:
    """The class name the protocol reports: builtins bare, others module-qualified."""
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


class Handles:
    """Engine-side objects named by ints, kept until the harness releases them."""

    def __init__(self):
        self.objects: dict[int, object] = {}
        self._next = itertools.count(1)

    def keep(self, obj) -> int:
        handle = next(self._next)
        self.objects[handle] = obj
        return handle

    def __getitem__(self, handle: int):
        return self.objects[handle]

    def release(self, handles) -> None:
        for handle in handles:
            self.objects.pop(handle, None)


def tokenizer_ops(tokenizer_of: Callable[[], object]) -> dict[str, Callable[[dict], object]]:
    """The tokenizer ops of a transformers-style tokenizer (``tokenizer_of()``: the family's, loaded by
    the engine's own ``load``), encoded and decoded as the servers call them."""
    return {
        "encode": lambda r: tokenizer_of().encode(r["text"], add_special_tokens=r["add_special_tokens"]),
        "decode": lambda r: tokenizer_of().decode(r["ids"], skip_special_tokens=r["skip_special_tokens"]),
        "token_to_id": lambda r: tokenizer_of().get_vocab().get(r["token"]),
        "id_to_token": lambda r: tokenizer_of().convert_ids_to_tokens(r["token_id"]),
        "vocab_size": lambda r: len(tokenizer_of()),
    }


def serve(lines, out, ops: dict[str, Callable[[dict], object]]) -> None:
    """Answers each request line of ``lines`` on ``out`` with ``ops[op](request)``; an exception
    becomes the protocol's error answer, so one bad request never ends the engine."""
    for line in lines:
        request = json.loads(line)
        try:
            if request["op"] not in ops:
                raise ValueError(f"unknown op {request['op']!r}")
            answer = {"id": request["id"], "result": ops[request["op"]](request)}
        except Exception as exc:  # every failure goes back to the harness as the contract's error
            answer = {"id": request["id"], "error": {"type": error_type(exc), "message": str(exc)}}
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()


def die_with_parent() -> None:
    """A request that never ends (a parser in a loop) must not outlive the harness that gave up on it:
    Linux kills this process when its parent dies."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
