"""A family's oracles in another Python process, under other versions of the oracle libraries.

``textbound compare --oracle-versions`` runs the same cases under two versions of ``tokenizers``
(or transformers). One process cannot hold two versions of a package, so each side's oracles run
in a child process whose ``sys.path`` starts with a folder holding the pinned packages (the rest
of the environment is the harness's own). The child serves its two roots over JSON lines: the
``tokenizers`` oracle of the folder (``oracle``) and transformers' tokenizer of it
(``transformers_tokenizer``, every call under the frozen clock, as the chat oracle renders).
``RemoteObject`` stands for any object reached from a root: reading an attribute asks the child,
calling one sends the call; values come back as plain data.

    >>> oracles = RemoteOracles(Path("families/gpt2"), overlay=Path("overlays/tokenizers-0.22.1"))  # doctest: +SKIP
    >>> oracles.versions["tokenizers"], oracles.root("oracle").encode("Hi there")                   # doctest: +SKIP
    ('0.22.1', [17250, 612])
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

ROOTS = ("oracle", "transformers_tokenizer")
PACKAGES = ("tokenizers", "transformers")
# What a child sends back for an object that is not plain data: its attributes, read once.
ADDED_TOKEN_FIELDS = ("content", "lstrip", "rstrip", "normalized", "single_word", "special")
ENCODING_FIELDS = ("ids", "tokens")


class RemoteOracleError(Exception):
    """The child process could not be started or stopped answering; the message says why."""


def to_wire(value):
    """Plain JSON data for ``value``: dicts keep non-string keys as pairs, objects become their fields."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"__set__": [to_wire(v) for v in value]}
    if isinstance(value, dict) or hasattr(value, "keys") and hasattr(value, "items"):
        return {"__items__": [[to_wire(k), to_wire(v)] for k, v in value.items()]}
    fields = ADDED_TOKEN_FIELDS if hasattr(value, "single_word") else ENCODING_FIELDS
    if all(hasattr(value, name) for name in fields):
        return {"__fields__": {name: to_wire(getattr(value, name)) for name in fields}}
    return {"__object__": type(value).__name__}


def from_wire(value):
    """The parent's view of ``to_wire``'s data: dicts, lists, and SimpleNamespace for objects."""
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    if isinstance(value, dict):
        if "__set__" in value:
            return frozenset(_hashable(from_wire(v)) for v in value["__set__"])
        if "__items__" in value:
            return {_hashable(from_wire(k)): from_wire(v) for k, v in value["__items__"]}
        if "__fields__" in value:
            return SimpleNamespace(**{k: from_wire(v) for k, v in value["__fields__"].items()})
    return value


def _is_data(value) -> bool:
    """Whether ``value`` is plain data a reply can carry whole (else the parent keeps it remote)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_data(v) for v in value)
    if isinstance(value, dict):
        return all(_is_data(k) and _is_data(v) for k, v in value.items())
    return False


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def _raised(error: dict) -> Exception:
    """An exception of the child's class name and module, so reports compare classes as in-process."""
    cls = type(error["class"], (Exception,), {"__module__": error["module"]})
    return cls(error["message"])


class RemoteOracles:
    """The oracles of ``folder`` in a child process whose packages come first from ``overlay``."""

    def __init__(self, folder: Path, overlay: Path | None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(overlay) if overlay else "", env.get("PYTHONPATH", "")) if p)
        try:
            self.process = subprocess.Popen([sys.executable, "-m", "textbound.oracles.remote", str(folder)], env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True, encoding="utf-8")
        except OSError as exc:
            raise RemoteOracleError(f"cannot start the oracle process: {exc}") from None
        self.versions: dict[str, str] = self._answer()

    def _answer(self):
        line = self.process.stdout.readline()
        if not line:
            words = " | ".join(self.process.stderr.read().strip().splitlines()[-3:]) or "no output"
            raise RemoteOracleError(f"the oracle process ended: {words}")
        reply = json.loads(line)
        if "error" in reply:
            raise _raised(reply["error"])
        return from_wire(reply["value"])

    def request(self, **message):
        self.process.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def root(self, name: str) -> "RemoteObject":
        return RemoteObject(self, [name])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=30)


class RemoteObject:
    """An object in the child, named by its path from a root: attributes that are data are read at
    once, the others stay remote; calling sends the arguments as JSON."""

    def __init__(self, oracles: RemoteOracles, path: list[str]):
        self._oracles, self._path = oracles, path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        path = [*self._path, name]
        reply = self._oracles.request(op="get", path=path)
        return RemoteObject(self._oracles, path) if reply == {"remote": True} else reply

    def __call__(self, *args, **kwargs):
        return self._oracles.request(op="call", path=self._path, args=list(args), kwargs=kwargs)


# --- the child -------------------------------------------------------------------------------------

def _serve(folder: Path) -> None:
    from textbound.oracles.chat_oracle import FamilyChatOracle, frozen_clock
    from textbound.oracles.tokenizers_oracle import TokenizersOracle
    loaders = {"oracle": lambda: TokenizersOracle.from_dir(folder),
               "transformers_tokenizer": lambda: FamilyChatOracle.of(folder).tokenizer}
    roots: dict[str, object] = {}

    def reply(**message) -> None:
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    reply(value={name: version(name) for name in PACKAGES})
    for line in sys.stdin:
        message = json.loads(line)
        try:
            path = message["path"]
            if path[0] not in roots:
                roots[path[0]] = loaders[path[0]]()
            target = roots[path[0]]
            for name in path[1:]:
                target = getattr(target, name)
            if message["op"] == "get":
                reply(value=to_wire(target) if _is_data(target) else {"remote": True})
            else:
                with frozen_clock():
                    value = target(*message["args"], **message["kwargs"])
                reply(value=to_wire(value))
        except Exception as exc:  # the oracle's own error, sent back as the parent would have seen it
            cls = type(exc)
            reply(error={"class": cls.__qualname__, "module": cls.__module__, "message": str(exc)})


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
