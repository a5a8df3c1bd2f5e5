"""An engine for the JSON-lines subprocess protocol (textbound/adapters/jsonl_engine.py), with impl behind
every op: the smallest complete engine, to copy from when wrapping another language's engine.

    TEXTBOUND_ENGINE_CMD="python tests/engines/echo_engine.py" textbound check --impl textbound.adapters.jsonl_engine

Options, for the tests: ``--ops encode,decode,...`` answers hello with only those ops (the others
stay served); ``--bug drop-last`` drops the last id of every encode of text with a digit (a broken
engine the checks must catch); ``--bug crash-on-decode`` exits in the middle of a decode.

    -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
    <- {"id": 3, "result": [13048]}
"""
from __future__ import annotations

import argparse
import base64
import itertools
import json
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # impl/, when run as a script from anywhere

from textbound import impl  # noqa: E402
from textbound.impl.chat.environment import frozen_clock  # noqa: E402


class Engine:
    def __init__(self, bug: str | None):
        self.bug = bug
        self.tokenizer: impl.Tokenizer | None = None
        self.objects: dict[int, object] = {}
        self.handles = itertools.count(1)

    def keep(self, obj) -> int:
        handle = next(self.handles)
        self.objects[handle] = obj
        return handle

    def handle(self, request: dict):
        op = request["op"]
        if op == "hello":
            return {"engine": "echo (impl)", "version": impl.__version__, "ops": sorted(OPS)}
        return OPS[op](self, request)

    def _tok(self) -> impl.Tokenizer:
        if self.tokenizer is None:
            raise ValueError("no family loaded: this request needs a family's process")
        return self.tokenizer

    def encode(self, r):
        ids = self._tok().encode(r["text"], add_special_tokens=r["add_special_tokens"])
        if self.bug == "drop-last" and any(c.isdigit() for c in r["text"]) and len(ids) > 1:
            ids = ids[:-1]
        return ids

    def decode(self, r):
        if self.bug == "crash-on-decode":
            sys.exit(3)
        return self._tok().decode(r["ids"], skip_special_tokens=r["skip_special_tokens"])

    def apply_chat_template(self, r):
        with frozen_clock(datetime.fromisoformat(r["now"])):
            return self._tok().apply_chat_template(
                r["conversation"], chat_template=r["chat_template"], tokenize=True, return_dict=False,
                sanitize_control_tokens=r["sanitize_control_tokens"], tools=r["tools"], documents=r["documents"],
                add_generation_prompt=r["add_generation_prompt"], continue_final_message=r["continue_final_message"],
                **r["variables"])

    def render_chat(self, r):
        with frozen_clock(datetime.fromisoformat(r["now"])):
            return impl.render_chat(r["template"], r["messages"], tools=r["tools"], documents=r["documents"],
                                    add_generation_prompt=r["add_generation_prompt"],
                                    continue_final_message=r["continue_final_message"], **r["variables"])

    def detokenizer_new(self, r):
        made = impl.IncrementalDetokenizer(self._tok(), skip_special_tokens=r["skip_special_tokens"],
                                           prompt_ids=r["prompt_ids"])
        return {"handle": self.keep(made), "prompt_text": made.prompt_text}

    def stops_add(self, r):
        checker = self.objects[r["handle"]]
        text = checker.add(r["delta"])
        return {"text": text, "stopped": checker.stopped, "stop_string": checker.stop_string}

    def release(self, r):
        for handle in r["handles"]:
            self.objects.pop(handle, None)


def _load(engine: Engine, r) -> None:
    engine.tokenizer = impl.Tokenizer.from_dir(r["path"])


def _method(name: str, *fields: str):
    """An op calling ``name`` on the object named by the request's handle with the given fields."""
    return lambda engine, r: getattr(engine.objects[r["handle"]], name)(*(r[f] for f in fields))


OPS = {
    "load": _load,
    "encode": Engine.encode,
    "decode": Engine.decode,
    "token_to_id": lambda e, r: e._tok().token_to_id(r["token"]),
    "id_to_token": lambda e, r: e._tok().id_to_token(r["token_id"]),
    "vocab_size": lambda e, r: e._tok().vocab_size,
    "vocab_bytes": lambda e, r: [base64.b64encode(data).decode("ascii") for data in e._tok().vocab_bytes()],
    "apply_chat_template": Engine.apply_chat_template,
    "detokenizer_new": Engine.detokenizer_new,
    "detokenizer_add": _method("add", "ids"),
    "detokenizer_flush": _method("flush"),
    "detokenizer_text": lambda e, r: e.objects[r["handle"]].text,
    "stops_new": lambda e, r: e.keep(impl.StopChecker(r["stops"], include_stop=r["include_stop"])),
    "stops_add": Engine.stops_add,
    "stops_finish": _method("finish"),
    "render_chat": Engine.render_chat,
    "parser_new": lambda e, r: e.keep(impl.OutputParser(r["format"], tools=r["tools"], reasoning=r["reasoning"],
                                                        starts_in_reasoning=r["starts_in_reasoning"])),
    "parser_feed": _method("feed", "text", "final"),
    "parse_response": lambda e, r: impl.parse_response(r["text"], r["format"], tools=r["tools"], reasoning=r["reasoning"],
                                                       starts_in_reasoning=r["starts_in_reasoning"]),
    "assemble": lambda e, r: impl.assemble(r["deltas"]),
    "json_schema_to_regex": lambda e, r: impl.json_schema_to_regex(r["schema"]),
    "tool_call_pattern": lambda e, r: impl.tool_call_pattern(r["tools"], name=r["name"], format=r["format"]),
    "constraint_new": lambda e, r: e.keep(impl.Constraint(r["pattern"], e._tok())),
    "constraint_start": _method("start"),
    "constraint_advance": _method("advance", "state", "token"),
    "constraint_allowed": lambda e, r: sorted(e.objects[r["handle"]].allowed_tokens(r["state"])),
    "constraint_complete": _method("is_complete", "state"),
    "release": Engine.release,
}


def error_type(exc: BaseException) -> str:
    """The class name the protocol reports: builtins bare, others module-qualified."""
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated ops to announce in hello (default: all)")
    parser.add_argument("--bug", choices=["drop-last", "crash-on-decode"])
    options = parser.parse_args()
    engine = Engine(options.bug)
    announced = options.ops.split(",") if options.ops else None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            result = engine.handle(request)
            if request["op"] == "hello" and announced is not None:
                result["ops"] = announced
            answer = {"id": request["id"], "result": result}
        except Exception as exc:  # every failure goes back to the harness as the contract's error
            answer = {"id": request["id"], "error": {"type": error_type(exc), "message": str(exc)}}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, default=list) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
