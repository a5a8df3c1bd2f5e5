"""``python -m textbound.adapters.serve MODULE``: any module exposing impl's public names (the
``--impl`` forms: a module name or a .py file) served over the JSON-lines protocol of
textbound.adapters.jsonl_engine, so that a harness in another Python environment checks it there.

    TEXTBOUND_ENGINE_CMD="python -m textbound.adapters.serve mymod" textbound check --impl textbound.adapters.jsonl_engine

    -> {"id": 1, "op": "hello", "protocol": 1}
    <- {"id": 1, "result": {"engine": "mymod", "version": "0.1.0", "ops": ["assemble", "decode", ...]}}
    -> {"id": 2, "op": "load", "path": "/models/gpt2"}
    <- {"id": 2, "result": null}
    -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
    <- {"id": 3, "result": [17250]}

``hello`` announces the ops of the names MODULE has (jsonl_engine.NAME_OPS), ``vocab_bytes`` and
``apply_chat_template`` when its Tokenizer has them. A MODULE that cannot be imported answers every
request with the error it raised, so the harness's setup names it. What MODULE prints goes to
stderr: stdout carries the protocol alone. ``textbound check`` serves an ``--impl`` so when its
oracles run in an oracle environment (textbound.plan.oracle_env; ``served_environment``). Needs
only the core of textbound (impl's regex and jinja2): never the oracles.
"""
from __future__ import annotations

import argparse
import base64
import ctypes
import itertools
import json
import os
import shlex
import signal
import sys
from contextlib import AbstractContextManager
from datetime import datetime
from types import ModuleType
from typing import BinaryIO

from textbound.impl.chat.environment import frozen_clock

from ..plan.implementation import SERVED_IMPL_ENV, import_module
from .jsonl_engine import ENGINE_CMD_ENV, NAME_OPS

PR_SET_PDEATHSIG = 1  # prctl's option: the signal this process gets when its parent dies

# Ops answered whatever the module provides, and the Tokenizer's optional methods, by op.
ALWAYS = ("release",)
TOKENIZER_EXTRAS = ("vocab_bytes", "apply_chat_template")


class Served:
    """Requests answered by ``module``'s public names; the objects they make kept by handle. A
    subclass overrides an op by defining the method of its name (tests/engines/echo_engine.py)."""

    def __init__(self, module: ModuleType, name: str):
        self.module, self.name = module, name
        self.ops = self.provided_ops()
        self.tokenizer = None
        self.objects: dict[int, object] = {}
        self.handles = itertools.count(1)

    def provided_ops(self) -> list[str]:
        """``["decode", "encode", ..., "release"]``: the ops of the public names the module has."""
        ops = {op for name, needed in NAME_OPS.items() if hasattr(self.module, name) for op in needed}
        ops.difference_update(TOKENIZER_EXTRAS)  # the Constraint's vocab_bytes is the tokenizer's
        tokenizer = getattr(self.module, "Tokenizer", None)
        ops.update(op for op in TOKENIZER_EXTRAS if hasattr(tokenizer, op))
        return sorted({*ops, *ALWAYS})

    def handle(self, request: dict):
        op = request["op"]
        if op == "hello":
            return {"engine": self.name, "version": getattr(self.module, "__version__", "unversioned"), "ops": self.ops}
        if op not in self.ops:
            raise NotImplementedError(f"{self.name} does not provide the op {op!r}")
        return getattr(self, op)(request)

    def keep(self, made) -> int:
        handle = next(self.handles)
        self.objects[handle] = made
        return handle

    def _tok(self):
        if self.tokenizer is None:
            raise ValueError("no family loaded: this request needs a family's process")
        return self.tokenizer

    # -- the ops, each answering one request (jsonl_engine's docstring lists their fields) --

    def load(self, r):
        self.tokenizer = self.module.Tokenizer.from_dir(r["path"])

    def encode(self, r):
        return self._tok().encode(r["text"], add_special_tokens=r["add_special_tokens"])

    def decode(self, r):
        return self._tok().decode(r["ids"], skip_special_tokens=r["skip_special_tokens"])

    def token_to_id(self, r):
        return self._tok().token_to_id(r["token"])

    def id_to_token(self, r):
        return self._tok().id_to_token(r["token_id"])

    def vocab_size(self, r):
        return self._tok().vocab_size

    def vocab_bytes(self, r):
        return [base64.b64encode(data).decode("ascii") for data in self._tok().vocab_bytes()]

    def apply_chat_template(self, r):
        with clock_at(r["now"]):
            return self._tok().apply_chat_template(
                r["conversation"], chat_template=r["chat_template"], tokenize=True, return_dict=False,
                sanitize_control_tokens=r["sanitize_control_tokens"], tools=r["tools"], documents=r["documents"],
                add_generation_prompt=r["add_generation_prompt"], continue_final_message=r["continue_final_message"],
                **r["variables"])

    def render_chat(self, r):
        with clock_at(r["now"]):
            return self.module.render_chat(r["template"], r["messages"], tools=r["tools"], documents=r["documents"],
                                           add_generation_prompt=r["add_generation_prompt"],
                                           continue_final_message=r["continue_final_message"], **r["variables"])

    def detokenizer_new(self, r):
        made = self.module.IncrementalDetokenizer(self._tok(), skip_special_tokens=r["skip_special_tokens"],
                                                  prompt_ids=r["prompt_ids"])
        return {"handle": self.keep(made), "prompt_text": made.prompt_text}

    def detokenizer_add(self, r):
        return self.objects[r["handle"]].add(r["ids"])

    def detokenizer_flush(self, r):
        return self.objects[r["handle"]].flush()

    def detokenizer_text(self, r):
        return self.objects[r["handle"]].text

    def stops_new(self, r):
        return self.keep(self.module.StopChecker(r["stops"], include_stop=r["include_stop"]))

    def stops_add(self, r):
        checker = self.objects[r["handle"]]
        text = checker.add(r["delta"])
        return {"text": text, "stopped": checker.stopped, "stop_string": checker.stop_string}

    def stops_finish(self, r):
        return self.objects[r["handle"]].finish()

    def parser_new(self, r):
        return self.keep(self.module.OutputParser(r["format"], tools=r["tools"], reasoning=r["reasoning"],
                                                  starts_in_reasoning=r["starts_in_reasoning"]))

    def parser_feed(self, r):
        return self.objects[r["handle"]].feed(r["text"], r["final"])

    def parse_response(self, r):
        return self.module.parse_response(r["text"], r["format"], tools=r["tools"], reasoning=r["reasoning"],
                                          starts_in_reasoning=r["starts_in_reasoning"])

    def assemble(self, r):
        return self.module.assemble(r["deltas"])

    def json_schema_to_regex(self, r):
        return self.module.json_schema_to_regex(r["schema"])

    def tool_call_pattern(self, r):
        return self.module.tool_call_pattern(r["tools"], name=r["name"], format=r["format"])

    def constraint_new(self, r):
        return self.keep(self.module.Constraint(r["pattern"], self._tok()))

    def constraint_start(self, r):
        return self.objects[r["handle"]].start()

    def constraint_advance(self, r):
        return self.objects[r["handle"]].advance(_state(r["state"]), r["token"])

    def constraint_allowed(self, r):
        return sorted(self.objects[r["handle"]].allowed_tokens(_state(r["state"])))

    def constraint_complete(self, r):
        return self.objects[r["handle"]].is_complete(_state(r["state"]))

    def release(self, r):
        for handle in r["handles"]:
            self.objects.pop(handle, None)


def _state(value):
    """A constraint state back from JSON: lists made tuples again, as the module gave them (hashable)."""
    return tuple(_state(v) for v in value) if isinstance(value, list) else value


def clock_at(now: str) -> AbstractContextManager:
    """The wall clock stopped at the harness's ``now`` (ISO 8601, local time) while a template
    renders: every library's with time-machine when installed, else impl's ``strftime_now`` alone."""
    moment = datetime.fromisoformat(now)
    try:
        import time_machine
    except ImportError:  # a light install: the module under test is impl or renders with it
        return frozen_clock(moment)
    return time_machine.travel(moment.astimezone(), tick=False)  # naive is local time, as the harness meant


def error_type(exc: BaseException) -> str:
    """The class name the protocol reports: builtins bare, others module-qualified.

    >>> error_type(ValueError()), error_type(json.JSONDecodeError("x", "", 0))
    ('ValueError', 'json.decoder.JSONDecodeError')
    """
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def serve(engine: Served | Exception, requests: BinaryIO, answers: BinaryIO) -> None:
    """Answers each request line of ``requests`` on ``answers`` until it closes; an ``engine`` that is
    an exception (the module did not import) answers every request with it."""
    for line in requests:
        request = json.loads(line)
        try:
            if isinstance(engine, Exception):
                raise engine
            answer = {"id": request["id"], "result": engine.handle(request)}
        except Exception as exc:  # every failure goes back to the harness as the contract's error
            answer = {"id": request["id"], "error": {"type": error_type(exc), "message": str(exc)}}
        # ASCII: a lone surrogate (a stop string's half) crosses as "\ud800", which UTF-8 cannot carry.
        answers.write(json.dumps(answer, ensure_ascii=True, default=list).encode("ascii") + b"\n")
        answers.flush()



def served_environment(module: str) -> dict[str, str]:
    """The variables under which a harness in another environment checks ``--impl module`` served
    from this Python: jsonl_engine's command runs this module with it, and Implementation reaches it so.

    >>> served_environment("mymod")[SERVED_IMPL_ENV]
    'mymod'
    """
    return {SERVED_IMPL_ENV: module, ENGINE_CMD_ENV: shlex.join([sys.executable, "-m", __name__, module])}


def protocol_stdout() -> BinaryIO:
    """This process's stdout for the protocol alone: what the module prints (Python or C) goes to stderr."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return answers


def die_with_parent() -> None:
    """A request that never ends (a module stuck in a loop) must not outlive the harness worker that
    gave up on it and was killed: Linux kills this process when its parent dies (as the engines'
    own protocol_loop does)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    die_with_parent()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="a module name or .py file exposing impl's public names")
    options = parser.parse_args(argv)
    for variable in served_environment(options.module):  # what served it: a module reading them would serve itself
        os.environ.pop(variable, None)
    answers = protocol_stdout()
    try:
        engine: Served | Exception = Served(import_module(options.module), options.module)
    except Exception as exc:  # noqa: BLE001 - the harness's hello gets it: its setup fails naming MODULE
        engine = exc
    serve(engine, sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
