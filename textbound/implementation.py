"""The implementation under test, reached only through its public names.

``--impl MODULE`` names any importable module exposing impl's public names; a component whose
names the module lacks is reported as not provided and skipped, never counted as passing.

A module exposing ``dialect()`` (textbound.adapters.server) is a running server: its cases come from
the server's case builders (``source == SERVER``), its components need the names of SERVER_NAMES,
and a property whose server feature (textbound.server.features) the dialect lacks is not provided.
"""
from __future__ import annotations

import importlib
from functools import cached_property
from types import ModuleType

from .server.features import SERVER_FEATURES, missing_features

LIBRARY, SERVER = "library", "server"  # where a run's cases come from: impl's names, or a server's wire

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
}
# A running server: the prompt side through its Tokenizer and render_chat, the output side through
# its dialect; chat needs no name of its own, each of its properties needs one (PROPERTY_NAMES).
SERVER_NAMES: dict[str, tuple[str, ...]] = {
    "tokenizer": ("Tokenizer",), "detokenizer": ("dialect",), "stops": ("dialect",), "chat": (),
    "tools": ("dialect",), "structured": ("dialect",),
}
SERVER_PROPERTY_NAMES = {**PROPERTY_NAMES, ("chat", "render"): ("render_chat",)}


class ImplementationError(Exception):
    """The --impl module could not be used at all."""


class Implementation:
    def __init__(self, module_name: str):
        try:
            self.module: ModuleType = importlib.import_module(module_name)
            # An engine adapter starts its engine to answer this: a broken engine fails the setup too.
            self.version = getattr(self.module, "__version__", "unversioned")
        except Exception as exc:  # any failure here means the run cannot be set up
            raise ImplementationError(f"--impl {module_name}: cannot import: {type(exc).__name__}: {exc}") from exc
        self.name = module_name
        self.source = SERVER if hasattr(self.module, "dialect") else LIBRARY
        self.probed: dict[str, str | None] = {}  # each server feature asked about: None where provided, else why not

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
