"""Patterns in tokenizer.json: ``{"String": s}`` (a literal) or ``{"Regex": r}`` (an Oniguruma regex).

Normalizers (Replace), pre-tokenizers (Split) and decoders (Replace) all take one; compiling them
in one place keeps the Oniguruma-to-`regex` translation in one place too.
"""
from __future__ import annotations

import regex

from .errors import TokenizerFileError, child


def compile_pattern(node: object, where: str) -> "regex.Pattern[str]":
    """The compiled pattern of a ``{"String": ...}`` or ``{"Regex": ...}`` node."""
    if isinstance(node, str):
        return regex.compile(regex.escape(node))
    if not isinstance(node, dict) or len(node) != 1:
        raise TokenizerFileError(where, 'expected a pattern: {"String": ...} or {"Regex": ...}')
    (kind, source), = node.items()
    if not isinstance(source, str):
        raise TokenizerFileError(child(where, kind), f"expected a string, found {type(source).__name__}")
    if kind == "String":
        return regex.compile(regex.escape(source))
    if kind == "Regex":
        try:
            return regex.compile(source)
        except regex.error as exc:
            raise TokenizerFileError(child(where, kind), f"invalid regex {source!r}: {exc}") from None
    raise TokenizerFileError(where, f"unknown pattern kind {kind!r} (expected String or Regex)")
