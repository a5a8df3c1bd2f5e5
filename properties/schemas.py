"""Hypothesis strategies for the ``structured`` component: JSON schemas in impl's supported subset,
and instances of a schema; and the project's corpus of tool schemas. The runner's checks draw
instances with properties/instance_samples.py, the same grammar without Hypothesis's cost.

``instances(schema)`` is written here rather than taken from hypothesis-jsonschema: its 0.23.1
fails on every object schema with current Hypothesis ('many' object has no attribute 'more'), and
impl's policy needs object keys in schema order, which it does not promise. Every instance is
checked with jsonschema before it is yielded, so a strategy bug can only lose examples, never
produce an invalid "valid" one.

    >>> schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]}
    >>> draw_examples(instances(schema), 1, 0)[0]["n"] >= 3
    True
"""
from __future__ import annotations

import json
import math
from functools import cache
from importlib.resources import files

from hypothesis import strategies as st

from textbound.oracles.structured_oracles import schema_errors
from textbound.properties.strategies import draw_examples

__all__ = ["draw_examples", "in_key_policy", "instances", "resolve_reference", "schemas", "tool_corpus", "tool_schemas"]

# Deeper than any corpus schema nests, shallow enough that recursive $refs stay small.
MAX_DEPTH = 5
# How many times one $ref unfolds along a path of an instance: the recursion depth every
# implementation must support (impl's bound is impl.structured.REF_DEPTH, 3: its regex
# matches nothing past it). A branch that would need more is left out, so a recursive tree
# ends in a leaf within the bound.
REF_DEPTH = 3
TIME_ZONES = ("Z", "+01:00", "-05:30", "+00:00")  # a formatted time ends in one of these
# A dot-atom local part (RFC 5321: no leading, trailing or doubled dot), as impl's email policy has it.
EMAIL_PATTERN = r"[a-z0-9_%+-]{1,8}(?:\.[a-z0-9_%+-]{1,6})?@[a-z0-9][a-z0-9-]{0,9}\.[a-z]{2,6}"
# Strings valid for each "format" keyword the schemas use.
FORMATTED_STRINGS = {
    "date": st.dates().map(lambda d: d.isoformat()),
    "time": st.builds(lambda h, m, s, zone: f"{h:02d}:{m:02d}:{s:02d}{zone}", st.integers(0, 23), st.integers(0, 59),
                      st.integers(0, 59), st.sampled_from(TIME_ZONES)),
    "uuid": st.uuids().map(str),
    "email": st.from_regex(EMAIL_PATTERN, fullmatch=True),
}
# Characters that JSON writes in several ways: quotes, backslashes, controls (escaped), DEL and C1
# controls (raw unless ensure_ascii), non-ASCII (escaped under ensure_ascii), astral (a surrogate pair).
JSON_TRICKY_CHARACTERS = 'ab Z09"\\/\n\t\x00\x1f\x7f\x85\u2028é中😀'
STRING_CHARACTERS = st.one_of(
    st.sampled_from(JSON_TRICKY_CHARACTERS),
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
)
PROPERTY_NAMES = ("id", "name", "user_id", "count", "tags", "q", "naïve", "with space", 'quo"te', "back\\slash",
                  "日本", "emoji😀", "a-b", "$ref")
# Anchored ASCII patterns, the kind real APIs put in schemas.
PATTERNS = (r"^[A-Z]{3}$", r"^[a-z][a-z0-9_-]{0,15}$", r"^\+?[0-9]{7,15}$", r"^[0-9]{4}-[0-9]{2}$", r"^(foo|bar)[0-9]?$")


def _strings(schema: dict) -> st.SearchStrategy[str]:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if "format" in schema:
        base = FORMATTED_STRINGS[schema["format"]]
    elif "pattern" in schema:
        base = st.from_regex(schema["pattern"], fullmatch=True)
    else:
        return st.text(STRING_CHARACTERS, min_size=low, max_size=high if high is not None else low + 12)
    return base.filter(lambda s: low <= len(s) and (high is None or len(s) <= high))


def _numbers(schema: dict, integer: bool) -> st.SearchStrategy:
    low, high = schema.get("minimum"), schema.get("maximum")
    whole = st.integers(None if low is None else math.ceil(low), None if high is None else math.floor(high))
    if integer:
        return whole
    return whole | st.floats(low, high, allow_nan=False, allow_infinity=False)


def resolve_reference(reference: str, root: dict) -> dict:
    """The schema a local ``$ref`` ("#/$defs/name", any JSON pointer into the root) names:
    ``resolve_reference("#/$defs/a", {"$defs": {"a": {"type": "string"}}})`` -> ``{"type": "string"}``."""
    if not reference.startswith("#"):
        raise ValueError(f"only local $ref is supported, got {reference!r}")
    node = root
    for part in filter(None, reference[1:].split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _of_type(kind: str, schema: dict, root: dict, depth: int, refs: tuple[str, ...]) -> st.SearchStrategy:
    if kind == "string":
        return _strings(schema)
    if kind in ("integer", "number"):
        return _numbers(schema, kind == "integer")
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        low = schema.get("minItems", 0)
        high = low if depth >= MAX_DEPTH else schema.get("maxItems", low + 3)
        return st.lists(_values(schema.get("items", {}), root, depth + 1, refs), min_size=low, max_size=high)
    if kind == "object":
        return _objects(schema, root, depth, refs)
    raise ValueError(f"unknown type {kind!r}")


def _objects(schema: dict, root: dict, depth: int, refs: tuple[str, ...]) -> st.SearchStrategy[dict]:
    """Required properties always, optional ones sometimes (never past MAX_DEPTH, nor past
    REF_DEPTH), in schema order. Empty (``is_empty``) when a required property has no instance."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    values = {name: _values(subschema, root, depth + 1, refs) for name, subschema in properties.items()
              if name in required or depth < MAX_DEPTH}
    optional = {name: value for name, value in values.items() if name not in required and not value.is_empty}
    return st.fixed_dictionaries({name: values[name] for name in properties if name in required},
                                 optional=optional).map(
        lambda drawn: {name: drawn[name] for name in properties if name in drawn})


def _values(schema: dict | bool, root: dict, depth: int, refs: tuple[str, ...] = ()) -> st.SearchStrategy:
    if schema is True or schema == {}:
        return st.none() | st.booleans() | st.integers(-9, 99) | st.text(STRING_CHARACTERS, max_size=4)
    if "$ref" in schema:
        reference = schema["$ref"]
        if refs.count(reference) >= REF_DEPTH:
            return st.nothing()
        return _values(resolve_reference(reference, root), root, depth, refs + (reference,))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return st.one_of([_values(branch, root, depth, refs) for branch in branches])
    kinds = schema.get("type", "object" if "properties" in schema else "string")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return st.one_of([_of_type(kind, schema, root, depth, refs) for kind in kinds])


def instances(schema: dict) -> st.SearchStrategy:
    """Valid instances of ``schema`` (checked with jsonschema), object keys in schema order."""
    return _values(schema, schema, 0).filter(lambda instance: not schema_errors(schema, instance))


def in_key_policy(schema: dict, instance, root: dict | None = None) -> bool:
    """Whether every object in ``instance`` has only its schema's declared properties, in schema
    order: impl's policy, so the only objects complete and differential ask impl to admit.

    >>> in_key_policy({"properties": {"a": {}, "b": {}}}, {"b": 1, "a": 2})
    False
    """
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return True
    if "$ref" in schema:
        return in_key_policy(resolve_reference(schema["$ref"], root), instance, root)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return any(in_key_policy(branch, instance, root) and not schema_errors({"$defs": root.get("$defs", {}), **branch}, instance)
                   for branch in branches)
    if isinstance(instance, dict):
        order = list(schema.get("properties", {}))
        if any(key not in order for key in instance) or [k for k in order if k in instance] != list(instance):
            return False
        return all(in_key_policy(schema["properties"][key], value, root) for key, value in instance.items())
    if isinstance(instance, list):
        return all(in_key_policy(schema.get("items", {}), item, root) for item in instance)
    return True


# -- generated schemas -----------------------------------------------------------------------------

def _bounded(low_key: str, high_key: str, values: st.SearchStrategy) -> st.SearchStrategy[dict]:
    """Optional lower and upper bounds with lower <= upper."""
    return st.tuples(st.none() | values, st.none() | values).map(lambda pair: {
        **({low_key: min(v for v in pair if v is not None)} if pair[0] is not None else {}),
        **({high_key: max(v for v in pair if v is not None)} if pair[1] is not None else {}),
    })


_STRING_SCHEMAS = st.one_of(
    _bounded("minLength", "maxLength", st.integers(0, 8)).map(lambda b: {"type": "string", **b}),
    st.sampled_from(sorted(FORMATTED_STRINGS)).map(lambda f: {"type": "string", "format": f}),
    st.sampled_from(PATTERNS).map(lambda p: {"type": "string", "pattern": p}),
    st.lists(st.text(STRING_CHARACTERS, max_size=6), min_size=1, max_size=4, unique=True).map(lambda e: {"enum": e}),
)
_LEAF_SCHEMAS = st.one_of(
    _STRING_SCHEMAS,
    _bounded("minimum", "maximum", st.integers(-1000, 1000)).map(lambda b: {"type": "integer", **b}),
    _bounded("minimum", "maximum", st.integers(-50, 50)).map(lambda b: {"type": "number", **b}),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.just({"type": ["string", "null"]}),
    st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True).map(lambda e: {"enum": e}),
    st.sampled_from([0, "fixed", True]).map(lambda c: {"const": c}),
)
# oneOf over branches of pairwise different types, so an instance of one branch matches no other.
_EXCLUSIVE_BRANCHES = st.lists(st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"},
                                                {"type": "null"}]), min_size=2, max_size=3, unique_by=lambda s: s["type"])


def _object_schemas(children: st.SearchStrategy) -> st.SearchStrategy[dict]:
    @st.composite
    def build(draw) -> dict:
        properties = draw(st.dictionaries(st.sampled_from(PROPERTY_NAMES), children, min_size=1, max_size=5))
        required = [name for name in properties if draw(st.booleans())]
        closed = draw(st.booleans())
        return {"type": "object", "properties": properties, **({"required": required} if required else {}),
                **({"additionalProperties": False} if closed else {})}
    return build()


def _array_schemas(children: st.SearchStrategy) -> st.SearchStrategy[dict]:
    return st.tuples(children, _bounded("minItems", "maxItems", st.integers(0, 4))).map(
        lambda pair: {"type": "array", "items": pair[0], **pair[1]})


def _with_definition(schema: dict, draw) -> dict:
    """The schema with one property moved into ``$defs`` and referenced from where it was."""
    name = draw(st.sampled_from(sorted(schema["properties"])))
    return {**schema, "properties": {**schema["properties"], name: {"$ref": "#/$defs/shared"}},
            "$defs": {"shared": schema["properties"][name]}}


@st.composite
def schemas(draw) -> dict:
    """A tool's parameters: an object schema nesting leaves, arrays, objects, anyOf and oneOf."""
    nested = st.recursive(_LEAF_SCHEMAS, lambda children: st.one_of(
        _object_schemas(children), _array_schemas(children),
        st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches}),
        _EXCLUSIVE_BRANCHES.map(lambda branches: {"oneOf": branches}),
    ), max_leaves=8)
    schema = draw(_object_schemas(nested))
    return _with_definition(schema, draw) if draw(st.booleans()) else schema


# -- the corpus ------------------------------------------------------------------------------------

@cache
def _corpus_text() -> tuple[tuple[str, str], ...]:
    folder = files("textbound.corpora") / "tool_schemas"
    return tuple((entry.name.removesuffix(".json"), entry.read_text(encoding="utf-8"))
                 for entry in sorted(folder.iterdir(), key=lambda e: e.name) if entry.name.endswith(".json"))


def tool_corpus() -> dict[str, list[dict]]:
    """Each corpus file's tools (a fresh copy: callers may hand them to code that could mutate them)."""
    return {name: json.loads(text) for name, text in _corpus_text()}


def tool_schemas() -> dict[str, dict]:
    """Every corpus tool by ``FILE/NAME``: ``tool_schemas()["travel/get_weather"]["function"]["name"]``."""
    return {f"{group}/{tool['function']['name']}": tool for group, tools in tool_corpus().items() for tool in tools}
