"""Errors raised by impl, each naming what is wrong and where.

A tokenizer.json fault names the file and the JSON path of the faulty node
(``tokenizer.json: $.pre_tokenizer.pretokenizers[1].behavior``), so a user can open the file and
go straight to it.
"""
from __future__ import annotations

from typing import Any


class TokenizerFileError(ValueError):
    """A tokenizer.json that is corrupt or uses a component impl does not implement."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where


def child(where: str, key: str | int) -> str:
    """The JSON path of ``key`` below ``where``."""
    return f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"


def field(node: Any, key: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``node[key]``, or a TokenizerFileError naming the missing or mistyped field."""
    if not isinstance(node, dict):
        raise TokenizerFileError(where, f"expected an object, found {type(node).__name__}")
    if key not in node:
        raise TokenizerFileError(child(where, key), "required field is missing")
    value = node[key]
    if kind is not None and not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TokenizerFileError(child(where, key), f"expected {names}, found {type(value).__name__}")
    return value


def optional(node: dict, key: str, where: str, default: Any, kind: type | tuple[type, ...] | None = None) -> Any:
    """``node[key]`` when present and not null, else ``default``; mistyped values still raise."""
    if node.get(key) is None:
        return default
    return field(node, key, where, kind)


def defaulted(node: dict, key: str, where: str, default: Any, kind: type) -> Any:
    """A field Rust reads with a serde default: it may be absent, but not null or mistyped."""
    return field(node, key, where, kind) if key in node else default


def char_field(node: dict, key: str, where: str) -> str:
    """A field Rust reads as a ``char``: a string of exactly one code point."""
    value = field(node, key, where, str)
    if len(value) != 1:
        raise TokenizerFileError(child(where, key), f"expected a single character, found {value!r}")
    return value


def unknown_type(where: str, stage: str, type_name: Any, known: dict) -> TokenizerFileError:
    """The one error for a component impl does not implement."""
    return TokenizerFileError(
        child(where, "type"),
        f"unsupported {stage} type {type_name!r} (impl supports: {', '.join(sorted(known))})",
    )


def build_component(node: Any, where: str, stage: str, registry: dict) -> Any:
    """The component of ``registry`` that the node's "type" names, built from the node."""
    type_name = field(node, "type", where, str)
    if type_name not in registry:
        raise unknown_type(where, stage, type_name, registry)
    return registry[type_name].from_json(node, where)


def build_components(node: Any, key: str, where: str, stage: str, registry: dict) -> list:
    """The components listed under ``node[key]`` (a Sequence's members), each built with its path."""
    members = field(node, key, where, list)
    return [build_component(m, child(child(where, key), i), stage, registry) for i, m in enumerate(members)]
