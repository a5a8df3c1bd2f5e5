"""The implementation under test, reached only through its public names.

``--impl MODULE`` names any importable module exposing impl's public names; a component whose
names the module lacks is reported as not provided and skipped, never counted as passing.
"""
from __future__ import annotations

import importlib
from types import ModuleType

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

    def provides(self, component: str) -> bool:
        return not self.missing(component)

    def missing(self, component: str) -> list[str]:
        return [n for n in REQUIRED_NAMES[component] if not hasattr(self.module, n)]

    def missing_for(self, component: str, prop: str) -> list[str]:
        """The names a property needs beyond its component's that the module lacks."""
        return [n for n in PROPERTY_NAMES.get((component, prop), ()) if not hasattr(self.module, n)]

    def __getattr__(self, name: str):
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise AttributeError(f"implementation {self.name!r} does not provide {name!r}") from None
