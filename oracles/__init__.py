"""Oracles: what defines the right answer for each component, and which version of it.

- tokenizer, detokenizer: Hugging Face `tokenizers` (tokenizers_oracle), plus its DecodeStream.
- stops: a whole-text reference written here, independently of impl (stop_reference).
- chat: `transformers.apply_chat_template`.
- tools: transformers' response parser where a response template can express the format, else a
  whole-text reference written here (tool_reference).
- structured: `jsonschema` (is it valid), `outlines-core` and `llguidance` (what may follow).
"""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


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
