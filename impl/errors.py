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


class UnsupportedError(TokenizerFileError):
    """A file the oracle reads that impl refuses (random dropout, one id for two tokens).

    Never a reason to try another shape of the node: the oracle took this one.
    """


def unknown_type(where: str, stage: str, type_name: Any, known: dict) -> TokenizerFileError:
    """The one error for a component impl does not implement."""
    return TokenizerFileError(
        child(where, "type"),
        f"unsupported {stage} type {type_name!r} (impl supports: {', '.join(sorted(known))})",
    )


# How an untagged shape treats the node's "type" (see build_component).
ANY_TYPE = "any type"  # ignored: serde's ``#[serde(tag = "type")]`` structs read any value, or none
NAMED = "named"  # the type must be the shape's name
UNTYPED = "untyped"  # the type must be absent (the oracle's models)


def build_component(node: Any, where: str, stage: str, registry: dict,
                    untagged: tuple[tuple[str, type, str], ...] = ()) -> Any:
    """The component the node describes, built from the node.

    A "type" naming an entry of ``registry`` picks it. Otherwise the oracle tries its untagged
    shapes in order, ``(name, class, how the type is read)``, and the first that builds wins:
    older files wrote no "type", and serde reads some shapes whatever their "type" says
    (``{"type": "Foo", "strip_left": true, "strip_right": false}`` is a Strip normalizer).
    """
    if not isinstance(node, dict):
        raise TokenizerFileError(where, f"expected an object, found {type(node).__name__}")
    type_name = node.get("type")
    if isinstance(type_name, str) and type_name in registry:
        return registry[type_name].from_json(node, where)
    failures = {}
    for name, shape, reads_type in untagged:
        if reads_type == NAMED and type_name != name or reads_type == UNTYPED and "type" in node:
            continue
        try:
            return shape.from_json(node, where)
        except UnsupportedError:
            raise
        except TokenizerFileError as exc:
            failures[name] = exc
    if type_name in failures:  # the shape its type names: its own error says best what is wrong
        raise failures[type_name]
    if "type" not in node:
        tried = f" (tried: {', '.join(failures)})" if failures else ""
        raise TokenizerFileError(child(where, "type"), f"required field is missing, and the node matches no "
                                                      f"{stage} shape older files wrote without one{tried}")
    raise unknown_type(where, stage, type_name, {**registry, **{name: shape for name, shape, _ in untagged}})


def build_components(node: Any, key: str, where: str, stage: str, registry: dict,
                     untagged: tuple[tuple[str, type, str], ...] = ()) -> list:
    """The components listed under ``node[key]`` (a Sequence's members), each built with its path."""
    members = field(node, key, where, list)
    return [build_component(m, child(child(where, key), i), stage, registry, untagged)
            for i, m in enumerate(members)]
