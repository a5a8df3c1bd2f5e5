"""Reading the fields of tokenizer.json nodes, as serde reads them in Hugging Face's tokenizers.

Every fault raises a TokenizerFileError naming the JSON path of the faulty node, so all stages
report a missing, mistyped or out-of-range field in the same words.

    >>> field({"vocab": {}}, "merges", "tokenizer.json: $.model")
    Traceback (most recent call last):
    textbound.impl.errors.TokenizerFileError: tokenizer.json: $.model.merges: required field is missing
    >>> u32_value(2**32, "tokenizer.json: $.model.vocab.a")
    Traceback (most recent call last):
    textbound.impl.errors.TokenizerFileError: tokenizer.json: $.model.vocab.a: expected an id in 0..4294967295, found 4294967296
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TokenizerFileError, UnsupportedError

U32_MAX = 2**32 - 1  # token and type ids are u32 in tokenizers
U64_MAX = 2**64 - 1  # u64, and usize on the 64-bit platforms tokenizers ships for


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


def u32_value(value: Any, where: str) -> int:
    """A value Rust reads as a ``u32`` (token ids and type ids)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= U32_MAX:
        raise TokenizerFileError(where, f"expected an id in 0..{U32_MAX}, found {value!r}")
    return value


def usize_field(node: dict, key: str, where: str) -> int:
    """A field Rust reads as a ``usize`` (a count or a length)."""
    value = field(node, key, where, int)
    if not 0 <= value <= U64_MAX:
        raise TokenizerFileError(child(where, key), f"expected a non-negative integer, found {value}")
    return value


@dataclass(frozen=True)
class ByteLevelOptions:
    """The fields tokenizers reads for ByteLevel, whichever stage (pre-tokenizer, decoder,
    post-processor) the node is: all three require them, though each uses only some.

    >>> ByteLevelOptions.from_json({"add_prefix_space": False, "trim_offsets": True}, "$.decoder")
    ByteLevelOptions(add_prefix_space=False, trim_offsets=True, use_regex=True)
    """

    add_prefix_space: bool
    trim_offsets: bool
    use_regex: bool

    @classmethod
    def from_json(cls, node: dict, where: str) -> ByteLevelOptions:
        return cls(field(node, "add_prefix_space", where, bool), field(node, "trim_offsets", where, bool),
                   defaulted(node, "use_regex", where, True, bool))


@dataclass(frozen=True)
class MetaspaceOptions:
    """The fields tokenizers reads for Metaspace, as a pre-tokenizer and as a decoder alike.

    >>> MetaspaceOptions.from_json({"replacement": "\u2581", "add_prefix_space": False}, "$.decoder")
    Traceback (most recent call last):
    textbound.impl.errors.TokenizerFileError: $.decoder.add_prefix_space: false contradicts prepend_scheme 'always'
    """

    PREPEND_SCHEMES = ("always", "first", "never")

    replacement: str
    prepend_scheme: str
    split: bool

    @classmethod
    def from_json(cls, node: dict, where: str) -> MetaspaceOptions:
        replacement = char_field(node, "replacement", where)
        scheme = defaulted(node, "prepend_scheme", where, "always", str)
        if scheme not in cls.PREPEND_SCHEMES:
            raise TokenizerFileError(child(where, "prepend_scheme"), f"unknown prepend_scheme {scheme!r} "
                                     f"(expected one of {', '.join(cls.PREPEND_SCHEMES)})")
        # add_prefix_space is the older spelling of the scheme; tokenizers rejects a false one
        # unless the scheme (default "always") is "never" too.
        if optional(node, "add_prefix_space", where, None, bool) is False and scheme != "never":
            raise TokenizerFileError(child(where, "add_prefix_space"), f"false contradicts prepend_scheme {scheme!r}")
        return cls(replacement, scheme, optional(node, "split", where, True, bool))


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
