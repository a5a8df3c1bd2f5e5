"""Oracles: what defines the right answer for each component, and which version of it.

- tokenizer, detokenizer: Hugging Face `tokenizers` (tokenizers_oracle), plus its DecodeStream;
  `sentencepiece` and `tiktoken` as second oracles (disagreements).
- stops: a whole-text reference written here, independently of impl (stop_reference).
- chat: `transformers.apply_chat_template`.
- tools: transformers' response parser where a response template can express the format, else a
  whole-text reference written here (tool_reference).
- structured: `jsonschema` (is it valid), `outlines-core` and `llguidance` (what may follow).

``LIBRARIES`` is the one statement of which versions of these libraries textbound supports and
which extra of textbound installs each (pyproject.toml says the same; tests/test_extras.py holds
the two together). A library an oracle needs is imported through ``require``, so that a missing
one is a ``MissingExtra`` naming the extra, and ``lacking`` says so before any case is run:

    >>> lacking(["tokenizers"]) is None
    True
    >>> str(MissingExtra({"llguidance": "is not installed", "outlines-core": "is not installed"}))
    "llguidance is not installed, outlines-core is not installed: pip install 'textbound[second-oracles]'"

``SUPPORTED_VERSIONS`` are the floors of the two oracle libraries an engine's pins clash with
(tokenizers, transformers: the ``oracles`` extra): older ones judge no run; the command runs again in
an oracle environment at these versions (textbound.plan.oracle_env).

The oracles import nothing of the harness: truth must not depend on what is checked.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion


@dataclass(frozen=True)
class Library:
    """A library the oracles use: its distribution's name, the module it imports as, the versions
    textbound supports, and the extra that installs it (None: textbound's core). A floor is as old
    as the oracles were checked at, every library at its floor at once (``textbound check --budget
    quick`` agrees with impl on every embedded and shared family, the tests of the library's use
    pass), so that installing textbound into an engine's environment moves none of its pins that
    need not move; a comment says why where a floor is newer than an engine's."""

    distribution: str
    module: str
    supported: str
    extra: str | None = None

    @property
    def requirement(self) -> str:
        """As pyproject.toml writes it: ``"llguidance>=1.7"``."""
        return f"{self.distribution}{self.supported}"


ORACLES_EXTRA = "oracles"
SECOND_ORACLES_EXTRA = "second-oracles"
FAMILIES_EXTRA = "families"
LIBRARIES = {library.distribution: library for library in (
    # The two the checks judge with, an extra of their own: an engine pinning older ones keeps them,
    # and textbound judges in an environment of these (textbound.plan.oracle_env). 0.23.1 agrees on a
    # quick check, but impl's Unicode tables are tested against 0.23.3's (tests/test_normalizers.py).
    Library("tokenizers", "tokenizers", ">=0.23.3", ORACLES_EXTRA),
    # impl's chat follows transformers' rendering from 5.23 on (5.16.1 to 5.22.2 raise and render
    # otherwise on chat/render), and mistral-common's SentencePiece files convert as sentencepiece
    # reads them from 5.24 on. vLLM 0.33 (<5.21) and SGLang 0.5.23 (==5.19) pin below it.
    Library("transformers", "transformers", ">=5.24.0", ORACLES_EXTRA),
    Library("jinja2", "jinja2", ">=3.1.6"),  # 3.1.5 and 3.1.6 close sandbox escapes the chat checks try
    Library("jsonschema", "jsonschema", ">=4.21.1"),
    Library("rfc3339-validator", "rfc3339_validator", ">=0.1.4"),  # without it jsonschema skips "format": "time"
    Library("time-machine", "time_machine", ">=3.0"),  # both sides of a chat render under one frozen clock
    Library("sentencepiece", "sentencepiece", ">=0.2"),  # also trains the embedded unigram family's charsmap
    Library("tiktoken", "tiktoken", ">=0.7", SECOND_ORACLES_EXTRA),
    Library("llguidance", "llguidance", ">=1.7", SECOND_ORACLES_EXTRA),
    Library("outlines-core", "outlines_core", ">=0.2.14", SECOND_ORACLES_EXTRA),
    Library("numpy", "numpy", ">=1.25", SECOND_ORACLES_EXTRA),  # llguidance's token masks as id sets
    Library("mistral-common", "mistral_common", ">=1.11.7", FAMILIES_EXTRA),  # convert_tokenizer_to_chat_template
    # transformers' SentencePiece converter; with sentencepiece 0.2.3's own model_pb2, 7.36.0 and older fail it.
    Library("protobuf", "google.protobuf", ">=7.36.1", FAMILIES_EXTRA),
    Library("gguf", "gguf", ">=0.19", FAMILIES_EXTRA),
    Library("huggingface_hub", "huggingface_hub", ">=1.31", FAMILIES_EXTRA),  # transformers 5.24's floor
)}


class MissingExtra(ImportError):
    """Libraries an oracle needs that are not installed, or not at a supported version (each with
    its problem); the message names them and the extras of textbound that install them."""

    def __init__(self, problems: dict[str, str]):
        self.problems = problems  # distribution -> "is not installed", "1.2 is installed, ..."
        extras = sorted({extra for name in problems if (extra := LIBRARIES[name].extra)})
        install = f"textbound[{','.join(extras)}]" if extras else "textbound"
        super().__init__(", ".join(f"{name} {problem}" for name, problem in problems.items())
                         + f": pip install '{install}'")


@cache
def _problem(library: Library) -> str | None:
    """Why ``library`` cannot be used (not importable, or a version outside ``supported``), or None."""
    try:
        importlib.import_module(library.module)
        installed = version(library.distribution)
    except (ImportError, PackageNotFoundError):
        return "is not installed"
    try:
        if installed not in SpecifierSet(library.supported, prereleases=True):
            return f"{installed} is installed, textbound supports {library.supported}"
    except InvalidVersion:
        return f"{installed} is installed, not a version textbound can compare with {library.supported}"
    return None


def lacking(distributions: Iterable[str]) -> MissingExtra | None:
    """Those of ``distributions`` (LIBRARIES' names) that cannot be used, as one MissingExtra; None
    when all can."""
    problems = {name: problem for name in distributions if (problem := _problem(LIBRARIES[name]))}
    return MissingExtra(problems) if problems else None


def require(distribution: str) -> ModuleType:
    """The library's module, imported; MissingExtra naming its extra when it cannot be used:
    ``require("tiktoken").Encoding``."""
    missing = lacking([distribution])
    if missing:
        raise missing
    return importlib.import_module(LIBRARIES[distribution].module)

# The oldest release of each oracle library whose answers are the truth here.
# The oldest release of each library of the ``oracles`` extra whose answers are the truth here.
SUPPORTED_VERSIONS = {name: library.supported.removeprefix(">=") for name, library in LIBRARIES.items()
                      if library.extra == ORACLES_EXTRA}


def _package(name: str) -> str:
    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return f"{name} (not installed)"


def versions() -> dict[str, str]:
    """The oracle behind each component, with its version, stamped into every record."""
    tokenizers = _package("tokenizers")
    return {
        "tokenizer": tokenizers,
        "detokenizer": tokenizers,
        "stops": "oracles.stop_reference (whole-text reference)",
        "chat": _package("transformers"),
        "tools": f"{_package('transformers')}; oracles.tool_reference (whole-text reference)",
        "structured": "; ".join(_package(name) for name in ("jsonschema", "outlines-core", "llguidance")),
    }


def installed_versions() -> dict[str, str | None]:
    """Each library of SUPPORTED_VERSIONS with its installed version (None when not installed)."""
    installed = {}
    for name in SUPPORTED_VERSIONS:
        try:
            installed[name] = version(name)
        except PackageNotFoundError:
            installed[name] = None
    return installed


def unsupported(installed: dict[str, str | None]) -> list[str]:
    """The libraries of ``installed`` (as installed_versions gives) that cannot judge: older than
    SUPPORTED_VERSIONS, or missing. A pre-release counts as its release.

    >>> unsupported({"tokenizers": "0.22.2", "transformers": None})
    ['tokenizers 0.22.2', 'transformers (not installed)']
    >>> unsupported({"tokenizers": "0.23.10", "transformers": "5.24.0rc1"})
    []
    """
    def release(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.match(r"\d+(?:\.\d+)*", text).group().split("."))
    return [f"{name} {installed[name]}" if installed.get(name) else f"{name} (not installed)"
            for name, oldest in SUPPORTED_VERSIONS.items()
            if not installed.get(name) or release(installed[name]) < release(oldest)]
