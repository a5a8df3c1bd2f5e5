"""The implementation under test, reached only through its public names.

``--impl MODULE`` names any importable module exposing impl's public names, or a Python file
(``--impl ./mymod.py``, ``--impl tests/broken_impl.py``); a module in the current folder is found
also when the ``textbound`` script's own path lacks that folder. A property whose names the module
lacks (PROPERTY_NAMES) is reported as not provided and skipped, never counted as passing nor failed,
and a component so when none of its properties is provided. What the names must answer is
textbound.adapters.contract's.

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

# The public names each property calls, all of them: a component is provided where one of its
# properties is, and a property where the module has all its names ("Tokenizer.vocab_bytes": the
# Tokenizer with that member). A module with only StopChecker is checked on stops/stream, and
# stops/pipeline, which streams ids through the detokenizer first, is reported as not provided.
# Signatures and return types: textbound.adapters.contract; tests/test_contract.py runs each property
# on a module holding only its names.
PATTERNS = ("json_schema_to_regex", "tool_call_pattern")  # a case's pattern: of its schema, or its tools' call
PROPERTY_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("tokenizer", "encode"): ("Tokenizer",),
    ("tokenizer", "decode"): ("Tokenizer",),
    ("tokenizer", "vocab"): ("Tokenizer",),
    ("detokenizer", "stream"): ("Tokenizer", "IncrementalDetokenizer"),
    ("detokenizer", "decode_stream"): ("Tokenizer", "IncrementalDetokenizer"),
    ("stops", "stream"): ("StopChecker",),
    ("stops", "pipeline"): ("Tokenizer", "IncrementalDetokenizer", "StopChecker"),
    ("chat", "render"): ("render_chat",),
    ("chat", "ids"): ("Tokenizer.apply_chat_template",),
    ("chat", "sanitized_ids"): ("Tokenizer.apply_chat_template",),
    ("tools", "whole"): ("parse_response",),
    ("tools", "stream"): ("OutputParser", "assemble", "parse_response"),
    ("tools", "deltas"): ("OutputParser", "assemble"),
    # The parser fed what the implementation's own detokenizer streams of the oracle's ids.
    ("tools", "tokens"): ("Tokenizer", "IncrementalDetokenizer", "OutputParser", "assemble"),
    ("tools", "round_trip"): ("parse_response",),
    # Request shapes (textbound.checks.shapes): several instances fed interleaved; the server's pipeline.
    ("detokenizer", "interleaved"): ("Tokenizer", "IncrementalDetokenizer"),
    ("stops", "interleaved"): ("StopChecker",),
    ("tools", "interleaved"): ("OutputParser", "assemble"),
    ("tools", "pipeline"): ("Tokenizer", "IncrementalDetokenizer", "StopChecker", "OutputParser", "assemble"),
    ("structured", "sound"): ("json_schema_to_regex",),
    ("structured", "complete"): ("json_schema_to_regex",),
    ("structured", "differential"): ("json_schema_to_regex",),
    ("structured", "errors"): PATTERNS,
    ("structured", "mask"): (*PATTERNS, "Tokenizer.vocab_bytes", "Constraint"),
    # a forced tool call, read back by the parser
    ("structured", "guarantee"): ("tool_call_pattern", "Tokenizer.vocab_bytes", "Constraint", "parse_response"),
}
# A running server: the prompt side through its Tokenizer and render_chat (as PROPERTY_NAMES says per
# property), the output side through its dialect; chat needs no name of its own.
SERVER_NAMES: dict[str, tuple[str, ...]] = {
    "tokenizer": ("Tokenizer",), "detokenizer": ("dialect",), "stops": ("dialect",), "chat": (),
    "tools": ("dialect",), "structured": ("dialect",),
}
TOKENIZER = "Tokenizer"  # the name whose from_dir loads a family


# Folders whose modules were imported by their own names (``--impl impl``, ``--impl mutants.NAME``)
# before they became textbound's subpackages; records written then still name them so.
RENAMED = ("impl", "mutants")


class ImplementationError(Exception):
    """The --impl module could not be used at all."""


class FamilyUnloadable(ImplementationError):
    """The implementation cannot load a family (its ``Tokenizer.from_dir`` raised): the run is not set up."""


class PropertyNotProvided(ImplementationError):
    """A case of a property whose names the implementation lacks (a replayed case)."""


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
        self.lacked: dict[tuple[str, ...], list[str]] = {}  # _lacking's answers: asked for every case checked

    def replay_environment(self) -> tuple[tuple[str, str], ...]:
        """The variables the module is configured by that are set now (the names its
        ``REPLAY_ENVIRONMENT`` lists), which a record's replay command sets as the run had them:
        ``(("TEXTBOUND_ENGINE_CMD", "python engine.py"),)`` for textbound.adapters.jsonl_engine."""
        names = getattr(self.module, REPLAY_ENVIRONMENT, ())
        return tuple((name, os.environ[name]) for name in names if name in os.environ)

    def provides(self, component: str) -> bool:
        return not self.missing(component)

    def missing(self, component: str) -> list[str]:
        """What the module lacks to be checked on ``component`` at all: for a library, the names lacking
        for the property that lacks fewest (none where one property has all its names), so that
        ``missing("stops") == ["StopChecker"]`` for a module with a tokenizer and a detokenizer."""
        if self.source == SERVER:
            return [n for n in SERVER_NAMES[component] if not hasattr(self.module, n)]
        lacking = [self._lacking(names) for (c, _), names in PROPERTY_NAMES.items() if c == component]
        return min(lacking, key=len, default=[])

    def missing_for(self, component: str, prop: str) -> list[str]:
        """The names a property calls (PROPERTY_NAMES) that the module lacks; for a server, also the
        features the property needs that its dialect lacks (asked once each, then remembered)."""
        missing = self._lacking(PROPERTY_NAMES.get((component, prop), ()))
        if missing or self.source != SERVER:
            return missing
        return missing_features(self.server_dialect, SERVER_FEATURES.get((component, prop), ()), self.probed)

    def loads_families(self, component: str, prop: str | None = None) -> bool:
        """Whether checking the property (or any property of the component) the module provides calls
        ``Tokenizer.from_dir``."""
        props = [prop] if prop else [p for c, p in PROPERTY_NAMES if c == component]
        return any(TOKENIZER in (name.partition(".")[0] for name in PROPERTY_NAMES.get((component, p), ()))
                   and not self._lacking(PROPERTY_NAMES[(component, p)]) for p in props)

    def _lacking(self, names: tuple[str, ...]) -> list[str]:
        """What the module lacks of ``names``: a name, or of ``Name.member`` the name where the module
        lacks it, else the member (``["Tokenizer"]``, or ``["Tokenizer.vocab_bytes"]``)."""
        if names in self.lacked:
            return list(self.lacked[names])
        lacking = []
        for name in names:
            owner, _, member = name.partition(".")
            if not hasattr(self.module, owner):
                lacking.append(owner)
            elif member and not hasattr(getattr(self.module, owner), member):
                lacking.append(name)
        self.lacked[names] = list(dict.fromkeys(lacking))
        return list(self.lacked[names])

    @cached_property
    def server_dialect(self):
        """The dialect of the server under test (``source == SERVER`` only)."""
        return self.module.dialect()

    def __getattr__(self, name: str):
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise AttributeError(f"implementation {self.name!r} does not provide {name!r}") from None
