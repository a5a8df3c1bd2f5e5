"""Random valid instances of a JSON schema, drawn directly with a seeded ``random.Random``: what the
structured checks hold impl's pattern against, for a small part of what a Hypothesis draw costs.

The grammar is ``properties.schemas.instances``'s (required properties always, an optional one one
time in two, in schema order; nothing nested past MAX_DEPTH; a ``$ref`` unfolded at most REF_DEPTH
times along a path), and the values Hypothesis favours are drawn on purpose: bounds and their
neighbours, 0 and -0.0, floats json.dumps writes with an exponent, strings and arrays of the
shortest and longest allowed length (within END_REPEATS of the shortest), characters JSON escapes. A string's pattern is drawn from by
``regex_samples.pattern_texts``.
Every instance is checked with jsonschema; one that fails is drawn again, at most ATTEMPTS times.

Example: ``sample_instances({"type": "integer", "minimum": 3, "maximum": 5}, random.Random(0), 3)``
-> ``[3, 5, 4]`` (distinct instances; for some seed).
"""
from __future__ import annotations

import datetime
import json
import math
import random
import uuid

from textbound.oracles.structured_oracles import schema_errors

from .regex_samples import END_REPEATS, pattern_texts
from .schemas import EMAIL_PATTERN, JSON_TRICKY_CHARACTERS, MAX_DEPTH, REF_DEPTH, TIME_ZONES, resolve_reference

ATTEMPTS = 3  # draws per instance asked for before fewer are returned
EDGE_SHARE = 0.35  # how often a number or a length takes one of its edge values
EXTRA_LENGTH = 12  # characters a string without maxLength may have past its minLength
EXTRA_ITEMS = 3  # items an array without maxItems may have past its minItems
# Floats json.dumps writes in each of its forms: zero of both signs, exponents either way, the extremes.
TRICKY_FLOATS = (0.0, -0.0, 0.5, -1.5, 0.1, 1e-05, 1.5e-07, -2.5e-10, 1e16, 1.2345e+17, 123456789.125,
                 2.220446049250313e-16, 5e-324, 1.7976931348623157e+308, -1.7976931348623157e+308)
MAGNITUDES = (9, 99, 10**4, 10**9, 2**53, 10**20)  # how far an unbounded integer strays from its bound or 0


class _NoInstance(Exception):
    """The (sub)schema has no instance within the bounds: a ``$ref`` past REF_DEPTH, empty bounds."""


class _Rejected(Exception):
    """This draw missed a filter (a pattern's string outside the lengths): draw the instance again."""


def sample_instances(schema: dict, rng: random.Random, count: int) -> list:
    """Up to ``count`` distinct valid instances of ``schema``; none where it has none."""
    drawn: dict[str, object] = {}
    for _ in range(ATTEMPTS * count):
        if len(drawn) == count:
            break
        try:
            instance = _value(schema, schema, 0, (), rng)
        except _NoInstance:
            return []
        except _Rejected:
            continue
        key = json.dumps(instance, ensure_ascii=False)
        if key not in drawn and not schema_errors(schema, instance):
            drawn[key] = instance
    return list(drawn.values())


def _value(schema, root: dict, depth: int, refs: tuple[str, ...], rng: random.Random):
    if schema is True or schema == {}:
        return rng.choice((lambda: None, lambda: rng.random() < 0.5, lambda: rng.randint(-9, 99),
                           lambda: _text(rng, 0, 4)))()
    if "$ref" in schema:
        reference = schema["$ref"]
        if refs.count(reference) >= REF_DEPTH:
            raise _NoInstance(reference)
        return _value(resolve_reference(reference, root), root, depth, refs + (reference,), rng)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kinds = schema.get("type", "object" if "properties" in schema else "string")
    branches = schema.get("anyOf") or schema.get("oneOf") or [
        (kind, schema) for kind in (kinds if isinstance(kinds, list) else [kinds])]
    for branch in rng.sample(branches, len(branches)):  # a branch without an instance gives way to the next
        try:
            if isinstance(branch, tuple):
                return _of_type(*branch, root, depth, refs, rng)
            return _value(branch, root, depth, refs, rng)
        except _NoInstance:
            continue
    raise _NoInstance("no branch has an instance")


def _of_type(kind: str, schema: dict, root: dict, depth: int, refs: tuple[str, ...], rng: random.Random):
    if kind == "string":
        return _string(schema, rng)
    if kind == "integer" or (kind == "number" and rng.random() < 0.5):
        return _integer(schema.get("minimum"), schema.get("maximum"), rng)
    if kind == "number":
        return _float(schema.get("minimum"), schema.get("maximum"), rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        low = schema.get("minItems", 0)
        high = low if depth >= MAX_DEPTH else schema.get("maxItems", low + EXTRA_ITEMS)
        items = []
        for _ in range(_count(low, high, rng)):
            try:
                items.append(_value(schema.get("items", {}), root, depth + 1, refs, rng))
            except _NoInstance:
                if low:
                    raise
                return []
        return items
    if kind == "object":
        return _object(schema, root, depth, refs, rng)
    raise ValueError(f"unknown type {kind!r}")


def _object(schema: dict, root: dict, depth: int, refs: tuple[str, ...], rng: random.Random) -> dict:
    required = set(schema.get("required", ()))
    drawn = {}
    for name, subschema in schema.get("properties", {}).items():
        if name in required:
            drawn[name] = _value(subschema, root, depth + 1, refs, rng)
        elif depth < MAX_DEPTH and rng.random() < 0.5:
            try:
                drawn[name] = _value(subschema, root, depth + 1, refs, rng)
            except _NoInstance:
                continue
    return drawn


def _count(low: int, high: int | None, rng: random.Random) -> int:
    """A length in [low, high]: an end one time in EDGE_SHARE, else short ones more often than long
    (nested lengths multiply, and a long text makes every check along it slower). A range wider
    than END_REPEATS is drawn within END_REPEATS of its start, as the regex sampler draws repeats."""
    if high is None or high < low:
        raise _NoInstance(f"no length in [{low}, {high}]")
    top = min(high, low + END_REPEATS)
    if rng.random() < EDGE_SHARE:
        return rng.choice((low, top))
    return low + min(rng.randint(0, top - low), rng.randint(0, top - low))


def _string(schema: dict, rng: random.Random) -> str:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if "format" in schema:
        text = FORMATS[schema["format"]](rng)
    elif "pattern" in schema:
        text = _pattern_text(schema["pattern"], rng)
    else:
        return _text(rng, low, low + EXTRA_LENGTH if high is None else high)
    if len(text) < low or (high is not None and len(text) > high):
        raise _Rejected(text)
    return text


def _pattern_text(pattern: str, rng: random.Random) -> str:
    drawn = pattern_texts(pattern, rng, 1, kept=True)
    if not drawn:
        raise _NoInstance(pattern)
    return drawn[0]


def _text(rng: random.Random, low: int, high: int) -> str:
    """Characters JSON writes in several ways half the time, else printable ASCII, or a code point
    of the BMP or of any plane (never a surrogate)."""
    return "".join(_character(rng) for _ in range(_count(low, high, rng)))


def _character(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(JSON_TRICKY_CHARACTERS)
    if roll < 0.8:
        return chr(rng.randint(0x20, 0x7E))
    code = rng.randint(0, (0xFFFF if roll < 0.9 else 0x10FFFF) - 0x800)
    return chr(code + 0x800 if code >= 0xD800 else code)


def _integer(low, high, rng: random.Random) -> int:
    low = None if low is None else math.ceil(low)
    high = None if high is None else math.floor(high)
    if low is not None and high is not None and low > high:
        raise _NoInstance(f"no integer in [{low}, {high}]")
    bounds = [v for v in (low, high) if v is not None]
    near = [v for v in (None if low is None else low + 1, None if high is None else high - 1, 0, 1, -1)
            if v is not None and (low is None or v >= low) and (high is None or v <= high)]
    roll = rng.random()
    if bounds and roll < EDGE_SHARE / 2:
        return rng.choice(bounds)
    if near and roll < EDGE_SHARE:
        return rng.choice(near)
    if low is not None and high is not None:
        return rng.randint(low, high)
    spread = rng.randint(0, rng.choice(MAGNITUDES))
    if low is not None:
        return low + spread
    if high is not None:
        return high - spread
    return spread if rng.random() < 0.5 else -spread


def _float(low, high, rng: random.Random) -> float:
    within = [v for v in TRICKY_FLOATS if (low is None or v >= low) and (high is None or v <= high)]
    within += [float(v) for v in (low, high) if v is not None]
    if rng.random() < EDGE_SHARE:
        return rng.choice(within)
    if low is not None and high is not None:
        return rng.uniform(low, high)
    value = rng.uniform(-1, 1) * 10.0 ** rng.randint(-10, 20)
    return min(max(value, -math.inf if low is None else low), math.inf if high is None else high)


def _date(rng: random.Random) -> str:
    return datetime.date.fromordinal(rng.randint(1, datetime.date.max.toordinal())).isoformat()


def _time(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}{rng.choice(TIME_ZONES)}"


FORMATS = {"date": _date, "time": _time, "uuid": lambda rng: str(uuid.UUID(int=rng.getrandbits(128))),
           "email": lambda rng: _pattern_text(EMAIL_PATTERN, rng)}
