"""Oracles: what defines the right answer for each component, and which version of it.

- tokenizer, detokenizer: Hugging Face `tokenizers` (tokenizers_oracle), plus its DecodeStream.
- stops: a whole-text reference written here, independently of impl (stop_reference).
- chat: `transformers.apply_chat_template`.
- tools: transformers' response parser where a response template can express the format, else a
  whole-text reference written here (tool_reference).
- structured: `jsonschema` (is it valid), `outlines-core` and `llguidance` (what may follow).

SUPPORTED_VERSIONS are the oracle libraries' versions textbound judges with (pyproject's ``oracles``
extra says the same): older ones, such as an engine's pins, judge no run (textbound.plan.oracle_env).
"""
from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version

# The oldest release of each oracle library whose answers are the truth here.
SUPPORTED_VERSIONS = {"tokenizers": "0.23.3", "transformers": "5.24.0"}

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
