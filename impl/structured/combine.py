"""Schemas combined as real schemas combine them: one schema per conjunction, written by a translator.

A schema whose keywords stand beside ``$ref``, ``allOf``, ``anyOf`` or ``oneOf`` means the conjunction
of its parts (``{"type": "object", "oneOf": [...]}`` is ``allOf: [{"type": "object"}, {"oneOf": [...]}]``;
beside ``$ref`` this is 2019-09's reading, and a subset of draft 7's, which ignores the siblings).
``conjuncts`` splits a schema into its parts; ``merge`` intersects two plain parts (no combinator, no
``$ref``) keyword by keyword, and raises ValueError where the intersection is not one schema.

Object keywords intersect soundly for a writer that writes only declared properties: a property one
side declares and the other does not takes the other side's ``patternProperties`` matching its name,
or else its ``additionalProperties``; extra keys of a merged object follow both sides'
``additionalProperties`` only when neither has ``patternProperties`` (otherwise none is allowed).

Example: ``merge({"type": ["string", "null"], "minLength": 1}, {"type": "string", "minLength": 3})``
-> ``{"type": ["string"], "minLength": 3}``.
"""
from __future__ import annotations

import re

from .regex_syntax import OUTER
from .regex_text import searches

COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf")
_LOWER = {"minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"}  # the larger wins
_UPPER = {"maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"}  # the smaller wins
_OBJECT = {"properties", "patternProperties", "additionalProperties"}
_ALL_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


def normalized(schema: dict) -> dict:
    """``schema`` with draft 4's boolean ``exclusiveMinimum``/``exclusiveMaximum`` read as draft 6's numbers.

    ``normalized({"maximum": 5, "exclusiveMaximum": True})`` -> ``{"exclusiveMaximum": 5}``.
    """
    result = dict(schema)
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = result.get(exclusive)
        if isinstance(flag, bool):
            del result[exclusive]
            if flag and inclusive in result:
                result[exclusive] = result.pop(inclusive)
    return result


def conjuncts(schema: dict, constraining) -> list:
    """The parts ``schema`` is the conjunction of: its plain keywords (``constraining`` ones only), then
    its ``$ref``, ``anyOf`` and ``oneOf`` each alone, then its ``allOf`` members.

    ``conjuncts({"type": "object", "anyOf": [A, B]}, ...)`` -> ``[{"type": "object"}, {"anyOf": [A, B]}]``.
    """
    plain = {k: v for k, v in schema.items() if k in constraining and k not in COMBINATORS}
    parts = [plain] if plain else []
    parts += [{k: schema[k]} for k in ("$ref", "anyOf", "oneOf") if k in schema]
    members = schema.get("allOf", [])
    if not isinstance(members, list):
        raise ValueError("allOf: expected an array")
    return parts + members


def _type_set(schema: dict):
    types = schema.get("type", _ALL_TYPES)
    return {types} if isinstance(types, str) else set(types) if isinstance(types, list) else None


def _types(first: dict, second: dict) -> list[str]:
    both = []
    a, b = _type_set(first), _type_set(second)
    if a is None or b is None:
        raise ValueError("a 'type' that is neither a string nor an array")
    for name in _ALL_TYPES:
        if (name in a and name in b) or (name == "integer" and {"integer", "number"} & a and {"integer", "number"} & b):
            both.append(name)
    if "integer" in both and "number" in both:
        both.remove("integer")
    return both


def side_schemas(schema: dict, name: str) -> list:
    """What ``schema`` asks of the value of a property called ``name``: its ``properties`` entry and every
    ``patternProperties`` schema whose pattern ``name`` may match (under ECMA-262 or Python ``re``:
    regex_syntax's OUTER reading, Python's alone where impl cannot parse the pattern), or else its
    ``additionalProperties``.

    ``side_schemas({"patternProperties": {"^x": {"type": "string"}}}, "xa")`` -> ``[{"type": "string"}]``.
    """
    found = []
    properties = schema.get("properties", {})
    if isinstance(properties, dict) and name in properties:
        found.append(properties[name])
    patterns = schema.get("patternProperties", {})
    for pattern, sub in (patterns.items() if isinstance(patterns, dict) else ()):
        try:
            if _may_match(pattern, name):
                found.append(sub)
        except re.error:
            raise ValueError(f"patternProperties: {pattern!r} is not a regex") from None
    if not found:
        found.append(schema.get("additionalProperties", True))
    return [sub for sub in found if sub is not True and sub != {}]


def _may_match(pattern, name: str) -> bool:
    try:
        return searches(pattern, name, OUTER)
    except ValueError:
        return re.search(pattern, name) is not None


def conjunction(schemas: list):
    """One schema for the conjunction of ``schemas`` (True when empty)."""
    schemas = [s for s in schemas if s is not True and s != {}]
    if not schemas:
        return True
    if any(s is False for s in schemas):
        return False
    return schemas[0] if len(schemas) == 1 else {"allOf": schemas}


def _merge_objects(first: dict, second: dict, result: dict) -> None:
    names = list(dict.fromkeys([*first.get("properties", {}), *second.get("properties", {})]))
    if names:
        result["properties"] = {name: conjunction(side_schemas(first, name) + side_schemas(second, name))
                                for name in names}
    patterned = [s for s in (first, second) if s.get("patternProperties")]
    result.pop("patternProperties", None)
    result.pop("additionalProperties", None)
    if not patterned:
        extra = conjunction([s.get("additionalProperties", True) for s in (first, second)])
        if extra is not True:
            result["additionalProperties"] = extra
    elif len(patterned) == 1 and all(s is patterned[0] or s.get("additionalProperties", True) is True
                                     for s in (first, second)):
        result["patternProperties"] = patterned[0]["patternProperties"]
        if "additionalProperties" in patterned[0]:
            result["additionalProperties"] = patterned[0]["additionalProperties"]
    else:
        result["additionalProperties"] = False  # a sound subset: no key the parts judge differently


def _values(schema: dict):
    if "const" in schema:
        return [schema["const"]]
    return schema["enum"] if isinstance(schema.get("enum"), list) else None


def _numbers_equal(first, second) -> bool:
    numbers = (int, float)
    return (isinstance(first, numbers) and isinstance(second, numbers) and not isinstance(first, bool)
            and not isinstance(second, bool) and first == second)


def merge(first: dict, second: dict):
    """The intersection of two plain schemas (no ``$ref`` or combinator), False when it is empty.

    Raises ValueError naming a keyword both sides give that impl cannot intersect (two ``pattern``s).
    """
    result = dict(first)
    for keyword, value in second.items():
        if keyword not in result or keyword in _OBJECT:
            result.setdefault(keyword, value)
            continue
        mine = result[keyword]
        if keyword == "type":
            result["type"] = _types(first, second)
            if not result["type"]:
                return False
        elif keyword in _LOWER:
            result[keyword] = max(mine, value)
        elif keyword in _UPPER:
            result[keyword] = min(mine, value)
        elif keyword == "required":
            result[keyword] = list(dict.fromkeys([*mine, *value]))
        elif keyword == "uniqueItems":
            result[keyword] = bool(mine or value)
        elif keyword in ("enum", "const"):
            continue  # intersected below
        elif keyword == "items" and isinstance(mine, (dict, bool)) and isinstance(value, (dict, bool)):
            result[keyword] = conjunction([mine, value])
        elif mine != value:
            raise ValueError(f"unsupported keyword {keyword!r} in two parts of a conjunction")
    values = [_values(side) for side in (first, second)]
    if values != [None, None]:
        result.pop("const", None)
        kept = values[0] if values[1] is None else values[1] if values[0] is None else \
            [v for v in values[0] if any(v == w and type(v) is type(w) or _numbers_equal(v, w) for w in values[1])]
        if not kept:
            return False
        result["enum"] = kept
    if _OBJECT & (first.keys() | second.keys()):
        _merge_objects(first, second, result)
    return result
