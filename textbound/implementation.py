"""The implementation under test, reached only through its public names.

``--impl MODULE`` names any importable module exposing impl's public names, or a Python file
(``--impl ./mymod.py``, ``--impl tests/broken_impl.py``); a module in the current folder is found
also when the ``textbound`` script's own path lacks that folder. A component whose names the module
lacks is reported as not provided and skipped, never counted as passing.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
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
}


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
        try:
            self.module: ModuleType = import_module(module_name)
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
