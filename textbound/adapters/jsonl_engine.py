"""Any engine, in any language, as an ``--impl``: a JSON-lines protocol over the engine's stdin/stdout.

    TEXTBOUND_ENGINE_CMD="node my_engine.js" textbound check --impl textbound.adapters.jsonl_engine

``$TEXTBOUND_ENGINE_CMD`` (ENGINE_CMD_ENV) is the engine's command line (split as a POSIX shell
would, run without a shell). Each Python process starts it when first needed (the harness's setup
reads ``__version__``, so a broken engine fails the setup): once for requests that need no family
(stop strings, chat rendering, tool-call parsing, schema regexes) and once per family folder it
checks; the process serves one request at a time until its stdin closes (then it exits: a killed
harness worker leaves no engine behind). The engine's stderr is kept and quoted when it fails.
Other adapters run their own engines over this protocol with ``engine(family, command=[...])``.

Messages
--------
One JSON object per line (UTF-8; the harness writes ASCII only, escaping everything else, so a
lone surrogate in a test case arrives as ``"\\ud800"``). Requests carry ``id`` (an int) and ``op``;
the engine answers each with the same ``id`` and either ``result`` or ``error``:

    -> {"id": 1, "op": "hello", "protocol": 1}
    <- {"id": 1, "result": {"engine": "my-engine", "version": "1.2.0", "ops": ["encode", ...]}}
    -> {"id": 2, "op": "load", "path": "/models/qwen3"}
    <- {"id": 2, "result": null}
    -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
    <- {"id": 3, "result": [13048]}
    -> {"id": 4, "op": "decode", "ids": [99999999], "skip_special_tokens": false}
    <- {"id": 4, "error": {"type": "ValueError", "message": "invalid token id 99999999 at position 0"}}

``error.type`` is the exception class the contract names: a Python builtin's name (``ValueError``)
raises that builtin; a dotted name (``jinja2.exceptions.TemplateError``) raises a class of that
module and name (an ``EngineError``), which is what the chat checks compare with transformers'.

``hello`` lists the ops the engine supports; a public name is provided only when all its ops are
(NAME_OPS), so an engine with only a tokenizer is checked on the tokenizer and reported "not
provided" elsewhere. The ops, their arguments and results (see textbound.adapters for meanings):

    load                  path                                     -> null   (first request of a family's process)
    encode                text, add_special_tokens                 -> [id]
    decode                ids, skip_special_tokens                 -> str
    token_to_id           token                                    -> id | null
    id_to_token           token_id                                 -> str | null
    vocab_size                                                     -> int
    vocab_bytes                                                    -> [base64 str]  (per id from 0)
    apply_chat_template   conversation, chat_template, sanitize_control_tokens, tools, documents,
                          add_generation_prompt, continue_final_message, variables, now  -> [id]
    detokenizer_new       skip_special_tokens, prompt_ids          -> {"handle": h, "prompt_text": str}
    detokenizer_add       handle, ids                              -> str (the delta)
    detokenizer_flush     handle                                   -> str
    detokenizer_text      handle                                   -> str
    stops_new             stops, include_stop                      -> h
    stops_add             handle, delta    -> {"text": str, "stopped": bool, "stop_string": str | null}
    stops_finish          handle                                   -> str
    render_chat           template, messages, tools, documents, add_generation_prompt,
                          continue_final_message, variables, now   -> str
    parser_new            format, tools, reasoning, starts_in_reasoning  -> h
    parser_feed           handle, text, final                      -> [delta]
    parse_response        text, format, tools, reasoning, starts_in_reasoning  -> message
    assemble              deltas                                   -> message
    json_schema_to_regex  schema                                   -> str
    tool_call_pattern     tools, name, format                      -> str
    constraint_new        pattern                                  -> h   (family process)
    constraint_start      handle                                   -> state (any JSON value)
    constraint_advance    handle, state, token                     -> state
    constraint_allowed    handle, state                            -> [id]
    constraint_complete   handle, state                            -> bool
    release               handles                                  -> null   (objects no longer used)

Handles (``h``) are ints naming engine-side objects; the harness releases them in batches.
``variables`` holds render_chat's extra keyword arguments (``bos_token``, ``enable_thinking``...);
``now`` is the harness's local time (ISO 8601, "2025-03-14T09:26:53"): a template's ``strftime_now``
reads it, not the engine's clock (the checks freeze the harness's clock, not the engine's).
textbound.adapters.serve is a complete engine in Python (any --impl module behind every op) to copy from.

Server entry point: the engine's own, named in its script's header: every script under engines/
names the calls its engine's server makes, with their pre- and post-steps
(tests/test_adapter_entry_points.py checks that each does).
"""
from __future__ import annotations

import atexit
import base64
import builtins
import functools
import json
import os
import select
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from . import EngineMissing

ENGINE_CMD_ENV = "TEXTBOUND_ENGINE_CMD"
REPLAY_ENVIRONMENT = (ENGINE_CMD_ENV,)  # set in the replay commands of a run's records
PROTOCOL = 1
HANDSHAKE_SECONDS = 120.0  # hello and load: an engine that never answers them fails the run's setup
RELEASE_BATCH = 64  # handles of collected objects sent back to the engine together
EXIT_WAIT_SECONDS = 1.0  # how long a failed engine is given to exit, so its exit status can be quoted
STDERR_TAIL = 2000  # characters of the engine's stderr quoted when it fails

# The ops each public name needs from the engine.
NAME_OPS: dict[str, tuple[str, ...]] = {
    "Tokenizer": ("load", "encode", "decode", "token_to_id", "id_to_token", "vocab_size"),
    "IncrementalDetokenizer": ("detokenizer_new", "detokenizer_add", "detokenizer_flush", "detokenizer_text"),
    "StopChecker": ("stops_new", "stops_add", "stops_finish"),
    "render_chat": ("render_chat",),
    "OutputParser": ("parser_new", "parser_feed"),
    "parse_response": ("parse_response",),
    "assemble": ("assemble",),
    "json_schema_to_regex": ("json_schema_to_regex",),
    "tool_call_pattern": ("tool_call_pattern",),
    # The structured checks compare masks over the tokenizer's vocab_bytes.
    "Constraint": ("constraint_new", "constraint_start", "constraint_advance", "constraint_allowed",
                   "constraint_complete", "vocab_bytes"),
}


class EngineFailure(RuntimeError):
    """The engine broke the protocol: it could not start, died, or wrote something not an answer."""


class EngineError(Exception):
    """Base of the classes made for dotted ``error.type`` names the engine reports."""


_ERROR_CLASSES: dict[str, type[Exception]] = {}


def reported_error(error: dict) -> Exception:
    """The exception an ``error`` answer stands for.

    >>> reported_error({"type": "ValueError", "message": "bad id"})
    ValueError('bad id')
    >>> type(reported_error({"type": "jinja2.exceptions.TemplateError", "message": "x"})).__module__
    'jinja2.exceptions'
    """
    type_name, message = str(error.get("type") or "EngineError"), str(error.get("message", ""))
    builtin = getattr(builtins, type_name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        return builtin(message)
    if type_name not in _ERROR_CLASSES:
        module, _, name = type_name.rpartition(".")
        _ERROR_CLASSES[type_name] = type(name, (EngineError,), {"__module__": module or __name__, "__qualname__": name})
    return _ERROR_CLASSES[type_name](message)


class EngineProcess:
    """One running engine: requests go in as lines, answers come back in order."""

    def __init__(self, command: list[str], family: Path | None = None):
        self.command, self.family = command, family
        self._stderr = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr)
        except OSError as exc:
            raise EngineFailure(f"cannot start engine {shlex.join(command)}: {exc}") from exc
        self._buffer = bytearray()
        self._next_id = 0
        self._unreleased: list[int] = []
        try:
            self.hello = self.request("hello", timeout=HANDSHAKE_SECONDS, protocol=PROTOCOL)
            if family is not None:
                self.request("load", timeout=HANDSHAKE_SECONDS, path=str(family))
        except BaseException:
            self.close()  # an engine that refused its family would otherwise idle until the run ends
            raise

    def request(self, op: str, timeout: float | None = None, **arguments):
        """The engine's result for ``op``; its reported error raised; EngineFailure if it breaks."""
        if len(self._unreleased) >= RELEASE_BATCH:
            handles, self._unreleased = self._unreleased, []
            self.request("release", handles=handles)
        if "id" in arguments or "op" in arguments:
            raise ValueError(f"the arguments of {op!r} may not be named id or op: {sorted(arguments)}")
        self._next_id += 1
        line = json.dumps({"id": self._next_id, "op": op, **arguments}, ensure_ascii=True) + "\n"
        try:
            self._process.stdin.write(line.encode("ascii"))
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise self._failure(f"could not send {op!r} ({exc})") from None
        answer = self._answer(op, timeout)
        if answer.get("id") != self._next_id:
            raise self._failure(f"answered id {answer.get('id')!r} to request {self._next_id} ({op!r})")
        if "error" in answer:
            raise reported_error(answer["error"] if isinstance(answer["error"], dict) else {"message": answer["error"]})
        if "result" not in answer:
            raise self._failure(f"answered {op!r} with neither result nor error: {str(answer)[:200]}")
        return answer["result"]

    def release(self, handle: int) -> None:
        """Marks an engine-side object unused (sent with the next batch; never a request of its
        own here, as this runs from ``__del__``, possibly in the middle of another request)."""
        self._unreleased.append(handle)

    def _answer(self, op: str, timeout: float | None) -> dict:
        fd = self._process.stdout.fileno()
        while (end := self._buffer.find(b"\n")) < 0:
            if timeout is not None and not select.select([fd], [], [], timeout)[0]:
                raise self._failure(f"no answer to {op!r} within {timeout:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._failure(f"exited while answering {op!r}")
            self._buffer += chunk
        line, self._buffer = bytes(self._buffer[:end]), self._buffer[end + 1:]
        try:
            answer = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise self._failure(f"wrote a line that is not UTF-8 JSON ({exc}): {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise self._failure(f"wrote {line[:200]!r}, not a JSON object")
        return answer

    def _failure(self, what: str) -> EngineFailure:
        try:
            code = self._process.wait(timeout=EXIT_WAIT_SECONDS)  # one that closed its stdout is exiting
        except subprocess.TimeoutExpired:
            code = None
        status = f" (exit status {code})" if code is not None else ""
        self._stderr.seek(0)
        stderr = self._stderr.read().decode("utf-8", "replace")[-STDERR_TAIL:]
        where = f" for {self.family}" if self.family else ""
        return EngineFailure(f"engine {shlex.join(self.command)}{where} {what}{status}"
                             + (f"; its stderr ends:\n{stderr}" if stderr else ""))

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        """Closes its stdin (the engine exits) and waits a moment before killing it."""
        try:
            self._process.stdin.close()
            self._process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()


# Engines of this process, by command and family folder (None: the family-less one). Keyed by
# process id too: a forked worker must start its own rather than write into its parent's pipes.
_ENGINES: dict[tuple[int, tuple[str, ...], Path | None], EngineProcess] = {}
# Families an engine refused to load (the error it reported, as class and arguments), by the same
# key: the checks ask for a family's tokenizer once per case, and a refusal is not retried.
_REFUSED: dict[tuple[int, tuple[str, ...], Path | None], tuple[type[Exception], tuple]] = {}


def engine_command() -> list[str]:
    command = os.environ.get(ENGINE_CMD_ENV, "").strip()
    if not command:
        raise EngineMissing(f"textbound.adapters.jsonl_engine needs the engine's command in ${ENGINE_CMD_ENV} "
                            f"(e.g. {ENGINE_CMD_ENV}='python tests/engines/echo_engine.py')")
    return shlex.split(command)


def engine(family: Path | None = None, command: list[str] | None = None, *, one_family: bool = False) -> EngineProcess:
    """The engine of this process running ``command`` (default: $TEXTBOUND_ENGINE_CMD's) for
    ``family`` (None: family-less requests), started (again, if it died) when needed. With
    ``one_family``, starting a family's engine first closes this process's engines of the command's
    other families (an engine that holds a gigabyte: the checks go family by family)."""
    command = list(command) if command is not None else engine_command()
    key = (os.getpid(), tuple(command), Path(family).resolve() if family is not None else None)
    if key in _REFUSED:
        kind, arguments = _REFUSED[key]
        raise kind(*arguments)
    running = _ENGINES.get(key)
    if running is None or not running.alive:
        if one_family and key[2] is not None:
            _close_other_families(key)
        try:
            running = EngineProcess(command, key[2])
        except EngineFailure:
            raise  # a crash may not happen again: the next request starts the engine anew
        except Exception as exc:
            _REFUSED[key] = (type(exc), exc.args)
            raise
        _ENGINES[key] = running
    return running


def _close_other_families(key: tuple[int, tuple[str, ...], Path | None]) -> None:
    for other in [k for k in _ENGINES if k[:2] == key[:2] and k[2] not in (None, key[2])]:
        _ENGINES.pop(other).close()


@atexit.register
def _close_engines() -> None:
    for (pid, _, _), running in list(_ENGINES.items()):
        if pid == os.getpid():
            running.close()


def _hashable(value):
    """A JSON value usable as a dict key and set member (lists become tuples)."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


class _EngineObject:
    """An object living in the engine, named by its handle; released when collected here."""

    def __init__(self, process: EngineProcess, handle: int):
        self._process, self._handle = process, handle

    def _call(self, op: str, **arguments):
        return self._process.request(op, handle=self._handle, **arguments)

    def __del__(self):
        try:
            if self._process.alive:
                self._process.release(self._handle)
        except Exception:  # noqa: BLE001 - never raise from a finalizer (interpreter shutdown)
            pass


# -- the public names -------------------------------------------------------------------------

class EngineTokenizer:
    """A family's tokenizer in the engine (its own process, sent ``load`` with the folder)."""

    def __init__(self, process: EngineProcess):
        self.engine = process
        self._vocab_bytes: list[bytes] | None = None

    @classmethod
    def from_dir(cls, path: str | Path) -> "EngineTokenizer":
        return cls(engine(Path(path)))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.engine.request("encode", text=text, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.engine.request("decode", ids=list(ids), skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.engine.request("token_to_id", token=token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.engine.request("id_to_token", token_id=token_id)

    @property
    def vocab_size(self) -> int:
        return self.engine.request("vocab_size")

    def vocab_bytes(self) -> list[bytes]:
        if self._vocab_bytes is None:
            self._vocab_bytes = [base64.b64decode(data) for data in self.engine.request("vocab_bytes")]
        return self._vocab_bytes


class EngineChatTokenizer(EngineTokenizer):
    """An EngineTokenizer whose engine also answers ``apply_chat_template`` (ids only, no tensors)."""

    def apply_chat_template(self, conversation, chat_template=None, tokenize=True, return_dict=False,
                            sanitize_control_tokens=False, tools=None, documents=None, add_generation_prompt=False,
                            continue_final_message=False, **variables) -> list[int]:
        if not tokenize or return_dict:
            raise NotImplementedError("the JSON-lines protocol answers apply_chat_template with ids only "
                                      "(tokenize=True, return_dict=False)")
        return self.engine.request(
            "apply_chat_template", conversation=conversation, chat_template=chat_template,
            sanitize_control_tokens=sanitize_control_tokens, tools=tools, documents=documents,
            add_generation_prompt=add_generation_prompt, continue_final_message=continue_final_message,
            variables=variables, now=now())


def now() -> str:
    """``"2025-03-14T09:26:53"``: the local time as the harness sees it (frozen by the chat checks), for ``strftime_now``."""
    return datetime.now().isoformat()


def _engine_of(tokenizer) -> EngineProcess:
    if not isinstance(tokenizer, EngineTokenizer):
        raise TypeError(f"expected a textbound.adapters.jsonl_engine Tokenizer (EngineTokenizer), found {type(tokenizer).__name__}")
    return tokenizer.engine


class EngineDetokenizer(_EngineObject):
    def __init__(self, tokenizer: EngineTokenizer, skip_special_tokens: bool = True, prompt_ids=None):
        process = _engine_of(tokenizer)
        made = process.request("detokenizer_new", skip_special_tokens=skip_special_tokens,
                               prompt_ids=list(prompt_ids or []))
        super().__init__(process, made["handle"])
        self.prompt_text: str = made["prompt_text"]

    def add(self, ids) -> str:
        return self._call("detokenizer_add", ids=list(ids))

    def flush(self) -> str:
        return self._call("detokenizer_flush")

    @property
    def text(self) -> str:
        return self._call("detokenizer_text")


class EngineStopChecker(_EngineObject):
    family_less = staticmethod(engine)  # the process it runs in: an adapter with its own engine sets it

    def __init__(self, stops, include_stop: bool = False):
        process = self.family_less()
        super().__init__(process, process.request("stops_new", stops=list(stops), include_stop=include_stop))
        self.stopped, self.stop_string = False, None

    def add(self, delta: str) -> str:
        answer = self._call("stops_add", delta=delta)
        self.stopped, self.stop_string = answer["stopped"], answer["stop_string"]
        return answer["text"]

    def finish(self) -> str:
        return self._call("stops_finish")


def render_chat_in(process_of: Callable[[], EngineProcess], template, messages, *, tools=None, documents=None,
                   add_generation_prompt=False, continue_final_message=False, **variables) -> str:
    """``render_chat`` answered by the engine ``process_of()`` returns (``functools.partial`` it
    with an adapter's own engine)."""
    return process_of().request("render_chat", template=template, messages=messages, tools=tools, documents=documents,
                            add_generation_prompt=add_generation_prompt,
                            continue_final_message=continue_final_message, variables=variables, now=now())


class EngineOutputParser(_EngineObject):
    family_less = staticmethod(engine)  # the process it runs in: an adapter with its own engine sets it

    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        process = self.family_less()
        super().__init__(process, process.request("parser_new", format=format, tools=tools, reasoning=reasoning,
                                                  starts_in_reasoning=starts_in_reasoning))
        self.format = format

    def feed(self, text, final=False) -> list[dict]:
        return self._call("parser_feed", text=text, final=final)


def parse_response_in(process_of: Callable[[], EngineProcess], text, format="hermes", *, tools=None, reasoning=True,
                      starts_in_reasoning=False) -> dict:
    """``parse_response`` answered by the engine ``process_of()`` returns."""
    return process_of().request("parse_response", text=text, format=format, tools=tools, reasoning=reasoning,
                            starts_in_reasoning=starts_in_reasoning)


_render_chat = functools.partial(render_chat_in, engine)
_parse_response = functools.partial(parse_response_in, engine)


def _assemble(deltas) -> dict:
    return engine().request("assemble", deltas=list(deltas))


def _json_schema_to_regex(schema) -> str:
    return engine().request("json_schema_to_regex", schema=schema)


def _tool_call_pattern(tools, name=None, format="hermes") -> str:
    return engine().request("tool_call_pattern", tools=tools, name=name, format=format)


class EngineConstraint(_EngineObject):
    """States are the engine's JSON values, made hashable (lists become tuples) and sent back as JSON."""

    def __init__(self, pattern: str, tokenizer: EngineTokenizer):
        process = _engine_of(tokenizer)
        super().__init__(process, process.request("constraint_new", pattern=pattern))
        self.pattern = pattern

    def start(self):
        return _hashable(self._call("constraint_start"))

    def advance(self, state, token_id: int):
        return _hashable(self._call("constraint_advance", state=state, token=token_id))

    def allowed_tokens(self, state) -> frozenset[int]:
        return frozenset(self._call("constraint_allowed", state=state))

    def is_complete(self, state) -> bool:
        return self._call("constraint_complete", state=state)


# -- what this engine provides -----------------------------------------------------------------

# Defined under other names, so that only __getattr__ (asking the engine) answers for them.
_PUBLIC = {"Tokenizer": EngineTokenizer, "IncrementalDetokenizer": EngineDetokenizer, "StopChecker": EngineStopChecker,
           "render_chat": _render_chat, "OutputParser": EngineOutputParser, "parse_response": _parse_response,
           "assemble": _assemble, "json_schema_to_regex": _json_schema_to_regex,
           "tool_call_pattern": _tool_call_pattern, "Constraint": EngineConstraint}


def version_of(process: EngineProcess) -> str:
    """``"vllm 0.33.0"``: the engine and version its hello names, for an adapter's ``__version__``."""
    return f"{process.hello.get('engine', 'engine')} {process.hello.get('version', 'unversioned')}"


def provided_names() -> list[str]:
    """The public names whose ops the engine's hello lists."""
    ops = set(engine().hello.get("ops", ()))
    return [name for name, needed in NAME_OPS.items() if ops.issuperset(needed)]


def __getattr__(name: str):
    """Public names exist only where the engine supports them (``hasattr`` is how ``--impl`` asks)."""
    if name == "__version__":
        return version_of(engine())
    if name in _PUBLIC and name in provided_names():
        if name == "Tokenizer" and "apply_chat_template" in engine().hello.get("ops", ()):
            return EngineChatTokenizer
        return _PUBLIC[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (the engine does not provide it)")

