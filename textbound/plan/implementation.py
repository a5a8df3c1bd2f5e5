"""The implementation under test, reached only through its public names.

``--impl MODULE`` names any importable module exposing impl's public names, or a Python file
(``--impl ./mymod.py``, ``--impl tests/broken_impl.py``); a module in the current folder is found
also when the ``textbound`` script's own path lacks that folder. A component whose names the module
lacks is reported as not provided and skipped, never counted as passing.

A module exposing ``dialect()`` (textbound.adapters.server) is a running server: its cases come from
the server's case builders (``source == SERVER``), its components need the names of SERVER_NAMES,
and a property whose server feature (textbound.server.features) the dialect lacks is not provided.

A module named by ``$TEXTBOUND_SERVED_IMPL`` (SERVED_IMPL_ENV) lives in another Python environment:
it is reached through textbound.adapters.jsonl_engine, whose engine command serves it there
(textbound.adapters.serve; textbound.plan.oracle_env runs a check so when the oracles are elsewhere).
Its records still name it, so that replay and triage name what the user checked.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from functools import cached_property
from pathlib import Path
from types import ModuleType

from ..server.features import SERVER_FEATURES, missing_features

# The module attribute listing the environment variables an --impl module is configured by.
REPLAY_ENVIRONMENT = "REPLAY_ENVIRONMENT"
DEFAULT_IMPL = "textbound.impl"  # what --impl is when not given: the project's own implementation
LIBRARY, SERVER = "library", "server"  # where a run's cases come from: impl's names, or a server's wire
SERVED_IMPL_ENV = "TEXTBOUND_SERVED_IMPL"
JSONL_ADAPTER = "textbound.adapters.jsonl_engine"  # reaches an engine of any language, or a served module

# The public names each component needs from the implementation.
REQUIRED_NAMES: dict[str, tuple[str, ...]] = {
    "tokenizer": ("Tokenizer",),
    "detokenizer": ("Tokenizer", "IncrementalDetokenizer"),
    "stops": ("StopChecker",),
    # Checks needing Tokenizer.apply_chat_template run only where Tokenizer is provided too.
    "chat": ("render_chat",),
    "tools": ("OutputParser", "parse_response", "assemble"),
    "structured": ("json_schema_to_regex", "tool_call_pattern", "Constraint"),
}
# Properties that need more names than their component: a module with only render_chat is still
# checked on rendered text, and its ids properties are reported as not provided.
PROPERTY_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("chat", "ids"): ("Tokenizer",),
    ("chat", "sanitized_ids"): ("Tokenizer",),
    # The parser fed what the implementation's own detokenizer streams of the oracle's ids.
    ("tools", "tokens"): ("Tokenizer", "IncrementalDetokenizer"),
    # The stop checker fed what the implementation's own detokenizer streams.
    ("stops", "pipeline"): ("Tokenizer", "IncrementalDetokenizer"),
    # Masks are compared over the tokenizer's vocab_bytes; a guided run's text is read back as a call.
    ("structured", "mask"): ("Tokenizer",),
    ("structured", "guarantee"): ("Tokenizer", "parse_response"),
}
# A running server: the prompt side through its Tokenizer and render_chat, the output side through
# its dialect; chat needs no name of its own, each of its properties needs one (PROPERTY_NAMES).
SERVER_NAMES: dict[str, tuple[str, ...]] = {
    "tokenizer": ("Tokenizer",), "detokenizer": ("dialect",), "stops": ("dialect",), "chat": (),
    "tools": ("dialect",), "structured": ("dialect",),
}
SERVER_PROPERTY_NAMES = {**PROPERTY_NAMES, ("chat", "render"): ("render_chat",)}


# Folders whose modules were imported by their own names (``--impl impl``, ``--impl mutants.NAME``)
# before they became textbound's subpackages; records written then still name them so.
RENAMED = ("impl", "mutants")


class ImplementationError(Exception):
    """The --impl module could not be used at all."""


def is_file_path(name: str) -> bool:
    """``--impl ./mymod.py`` and ``--impl tests/broken_impl.py`` name files; ``--impl tests.broken_impl`` a module."""
    return name.endswith(".py") or "/" in name or os.sep in name


def import_module(name: str) -> ModuleType:
    """The module ``--impl name`` means: a file path is loaded from that file (its folder joins the
    path, as for ``python mymod.py``); a module name is imported, from the current folder too."""
    if is_file_path(name):
        return _import_file(Path(name))
    if name.split(".")[0] in RENAMED:  # a replay command recorded before the namespace
        name = f"textbound.{name}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name.split(".")[0] or os.getcwd() in sys.path:
            raise
    sys.path.append(os.getcwd())  # last: the folder never hides an installed package
    return importlib.import_module(name)


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise ImportError(f"no such file {path}")
    location, name = path.resolve(), path.stem
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) == str(location):  # a worker forked after the parent loaded it
            return loaded
        raise ImportError(f"a module named {name} is loaded already ({loaded.__name__}); rename the file")
    spec = importlib.util.spec_from_file_location(name, location)
    module = importlib.util.module_from_spec(spec)
    sys.path.append(str(location.parent))
    sys.modules[name] = module  # so that what the module defines can be pickled to and from workers
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


class Implementation:
    def __init__(self, module_name: str):
        served = module_name == os.environ.get(SERVED_IMPL_ENV)
        try:
            self.module: ModuleType = import_module(JSONL_ADAPTER if served else module_name)
            # An engine adapter starts its engine to answer this: a broken engine fails the setup too.
            self.version = getattr(self.module, "__version__", "unversioned")
        except Exception as exc:  # any failure here means the run cannot be set up
            raise ImplementationError(f"--impl {module_name}: cannot import: {type(exc).__name__}: {exc}") from exc
        self.name = module_name
        self.source = SERVER if hasattr(self.module, "dialect") else LIBRARY
        self.probed: dict[str, str | None] = {}  # each server feature asked about: None where provided, else why not

    def replay_environment(self) -> tuple[tuple[str, str], ...]:
        """The variables the module is configured by that are set now (the names its
        ``REPLAY_ENVIRONMENT`` lists), which a record's replay command sets as the run had them:
        ``(("TEXTBOUND_ENGINE_CMD", "python engine.py"),)`` for textbound.adapters.jsonl_engine."""
        names = getattr(self.module, REPLAY_ENVIRONMENT, ())
        return tuple((name, os.environ[name]) for name in names if name in os.environ)

    def provides(self, component: str) -> bool:
        return not self.missing(component)

    def missing(self, component: str) -> list[str]:
        names = SERVER_NAMES if self.source == SERVER else REQUIRED_NAMES
        return [n for n in names[component] if not hasattr(self.module, n)]

    def missing_for(self, component: str, prop: str) -> list[str]:
        """The names a property needs beyond its component's that the module lacks; for a server, also
        the features the property needs that its dialect lacks (asked once each, then remembered)."""
        names = SERVER_PROPERTY_NAMES if self.source == SERVER else PROPERTY_NAMES
        missing = [n for n in names.get((component, prop), ()) if not hasattr(self.module, n)]
        if missing or self.source != SERVER:
            return missing
        return missing_features(self.server_dialect, SERVER_FEATURES.get((component, prop), ()), self.probed)

    @cached_property
    def server_dialect(self):
        """The dialect of the server under test (``source == SERVER`` only)."""
        return self.module.dialect()

    def __getattr__(self, name: str):
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise AttributeError(f"implementation {self.name!r} does not provide {name!r}") from None
