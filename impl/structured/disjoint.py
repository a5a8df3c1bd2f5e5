"""Proofs that two schemas share no instance, read from over-approximations of each (what ``oneOf`` needs).

impl writes a sound SUBSET of each schema, so two written patterns being disjoint proves nothing about
the schemas. What does prove it is an over-approximation of each side: the JSON types an instance may
have, the values a ``const``/``enum`` allows, the names every object instance must have, the names no
object instance may have, and what each property's value must satisfy. Two schemas are disjoint when
their possible types do not meet, their possible values do not meet, or (where only objects are left)
one requires a name the other forbids, or both require a name whose values are disjoint (recursively).

Each over-approximation follows JSON Schema's logic: a schema is the conjunction of its keywords and
of ``allOf`` (disjoint if any conjunct is), ``anyOf``/``oneOf`` the union of their branches (disjoint if
every branch is). ``$ref`` is read as its target alone: draft 7 and earlier ignore the keywords beside
it, so they prove nothing there. ``not``, ``if`` and every other keyword are left out: fewer
constraints, a larger set, still an over-approximation. A ``$ref`` cycle, or nesting past
``DISJOINT_DEPTH``, stops the proof there (nothing known: the safe answer); each approximation is
computed once per schema object. Under draft 4 (a root ``$schema`` naming it) ``const`` is no keyword
and proves nothing.

Example: with ``{"$ref": "#/d"}`` where ``#/d`` is ``{"enum": ["a", "b"]}``, ``Disjoint(root).proved(
{"$ref": "#/d"}, {"type": "array"})`` -> True; ``proved({"required": ["a"]}, {"type": "object"})`` -> False.
"""
from __future__ import annotations

from .combine import normalized
from .regex_syntax import OUTER
from .regex_text import searches

DISJOINT_DEPTH = 8  # nested properties (and references) a proof follows before it gives up
ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string"})  # "integer" is a number
_DRAFT_4 = ("http://json-schema.org/draft-04/schema", "https://json-schema.org/draft-04/schema")


def _json_types(value) -> frozenset:
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if value is None:
        return frozenset({"null"})
    kinds = {int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return frozenset({kinds[type(value)]}) if type(value) in kinds else ALL_TYPES


def _same_json(first, second) -> bool:
    """JSON equality, erring towards "same": 1 and 1.0 are equal, True and 1 are not."""
    if isinstance(first, bool) or isinstance(second, bool):
        return first is second
    return first == second


def _certain_side(schema: dict, name: str):
    """A schema the value of property ``name`` satisfies under every reading: its ``properties`` entry, or
    ``additionalProperties`` where there are no ``patternProperties`` (a name may match a pattern under
    ECMA-262 and not under Python's ``re``: those are left out, a larger set)."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if name in properties:
        return properties[name]
    return True if schema.get("patternProperties") else schema.get("additionalProperties", True)


def _presence_of(schema, name: str, kinds: frozenset) -> bool:
    """Whether ``schema`` holds for every object having ``name`` whose value has one of ``kinds``: it
    requires ``name`` only, and asks of it at most a ``type`` covering ``kinds``."""
    if not isinstance(schema, dict) or schema.get("required") != [name]:
        return False
    if set(schema) - {"required", "properties", "type", "title", "description", "$comment"}:
        return False
    if "type" in schema and "object" not in Disjoint._declared_types(schema):
        return False
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or set(properties) - {name}:
        return False
    value = properties.get(name, True)
    if value is True or value == {}:
        return True
    if not (isinstance(value, dict) and set(value) <= {"type", "title", "description"} and "type" in value):
        return False
    declared = [value["type"]] if isinstance(value["type"], str) else value["type"]
    # kinds counts an integer as a number: only "number" covers every number the property may hold
    return kinds <= Disjoint._declared_types(value) and ("number" not in kinds or "number" in declared)


class Disjoint:
    """Disjointness proofs over the schemas of one document, ``resolve`` following a local ``$ref``
    (returning None where it cannot)."""

    def __init__(self, root, resolve):
        self.resolve = resolve
        schema_uri = root.get("$schema", "") if isinstance(root, dict) else ""
        self.const_is_keyword = not (isinstance(schema_uri, str) and schema_uri.startswith(_DRAFT_4))
        self._memo: dict[tuple[str, int], tuple] = {}

    def proved(self, first, second, depth: int = 0) -> bool:
        """True when no instance is valid for both ``first`` and ``second`` (False: not proved)."""
        if depth > DISJOINT_DEPTH:
            return False
        types = self._approximation("types", first) & self._approximation("types", second)
        if not types:
            return True
        values = [self._approximation("values", first), self._approximation("values", second)]
        if None not in values and not any(_same_json(a, b) for a in values[0] for b in values[1]):
            return True
        for known, other in ((values[0], second), (values[1], first)):
            if known is not None and all(self.rejects(other, value, depth) for value in known):
                return True
        # a non-object may be valid for both: object keywords hold for it
        return types <= {"object"} and self.objects_proved(first, second, depth)

    def objects_proved(self, first, second, depth: int = 0) -> bool:
        """True when no object is valid for both: one requires a name the other forbids, or both require a
        name whose values are disjoint. ``objects_proved({"required": ["a"]}, {"properties": {"a": False}})``
        -> True (a string is valid for both: ``proved`` says False)."""
        for a, b in ((first, second), (second, first)):
            required = self._approximation("required", a)
            if any(self._forbids(b, name, depth) or self._negated_presence(b, name, depth) for name in required):
                return True
            for name in required & self._approximation("required", b):
                if self.proved(self._property(a, name, depth), self._property(b, name, depth), depth + 1):
                    return True
        return False

    def rejects(self, schema, value, depth: int = 0) -> bool:
        """True when ``value`` is certainly invalid for ``schema`` (False: maybe valid), from the keywords
        that judge one value alone: type, enum/const, string lengths and ``pattern`` (matching under no
        reading: regex_syntax's OUTER), number bounds, ``required``, ``properties``, ``items``, and a
        ``not`` of an enum/const listing it.

        ``Disjoint({}, dict.get).rejects({"type": "string", "pattern": "^[0-9]+$"}, "beta")`` -> True.
        """
        if depth > DISJOINT_DEPTH:
            return False
        schema, all_of, choices = self._parts(schema)
        if schema is False:
            return True
        if not isinstance(schema, dict):
            return False
        if not _json_types(value) & self._declared_types(schema):
            return True
        declared = schema.get("type")
        declared = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
        if isinstance(value, float) and not value.is_integer() and "integer" in declared and "number" not in declared:
            return True  # 1.0 is an integer from draft 6 on: only a fraction is rejected
        own = self._own_values(schema)
        if own is not None and not any(_same_json(value, v) for v in own):
            return True
        if self._rejects_own(schema, value, depth) or self._accepts_listed(schema.get("not"), value):
            return True
        return any(self.rejects(part, value, depth + 1) for part in all_of) or \
            any(all(self.rejects(branch, value, depth + 1) for branch in branches) for branches in choices)

    def _accepts_listed(self, schema, value) -> bool:
        """True when ``schema`` certainly accepts ``value``: ``true``, or an ``enum``/``const`` (with at most
        a ``type``) listing it (what makes ``not`` reject it)."""
        if schema is True or schema == {}:
            return True
        if not isinstance(schema, dict) or not {"enum", "const"} & schema.keys():
            return False
        if set(schema) - {"enum", "const", "type", "title", "description", "$comment"}:
            return False
        values = self._own_values(schema)
        return values is not None and any(_same_json(value, v) and type(value) is type(v) for v in values) and \
            not (self._declared_types(schema) != ALL_TYPES and not _json_types(value) & self._declared_types(schema))

    def _rejects_own(self, schema: dict, value, depth: int) -> bool:
        if isinstance(value, str):
            lengths = schema.get("minLength", 0), schema.get("maxLength", len(value))
            if all(isinstance(n, int) for n in lengths) and not lengths[0] <= len(value) <= lengths[1]:
                return True
            pattern = schema.get("pattern")
            if isinstance(pattern, str):
                try:
                    return not searches(pattern, value, OUTER)
                except ValueError:
                    return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            bounds = normalized(schema)
            for keyword, broken in (("minimum", value.__lt__), ("maximum", value.__gt__),
                                    ("exclusiveMinimum", value.__le__), ("exclusiveMaximum", value.__ge__)):
                bound = bounds.get(keyword)
                if isinstance(bound, (int, float)) and not isinstance(bound, bool) and broken(bound) is True:
                    return True
        if isinstance(value, dict):
            required = schema.get("required")
            if isinstance(required, list) and any(isinstance(n, str) and n not in value for n in required):
                return True
            if any(self.rejects(_certain_side(schema, name), item, depth + 1) for name, item in value.items()):
                return True
        if isinstance(value, list) and "prefixItems" not in schema:  # 2020-12's items follow the prefix
            items = schema.get("items")
            if isinstance(items, (dict, bool)) and any(self.rejects(items, item, depth + 1) for item in value):
                return True
        return False

    def values(self, schema):
        """The values ``schema`` may allow (a ``const``/``enum`` somewhere every instance meets), None
        where any value may do: ``values({"allOf": [{"enum": [1, 2]}, {"enum": [2, 3]}]})`` -> ``[2]``."""
        return self._approximation("values", schema)

    def value_exclusions(self, first, second):
        """Schemas admitting only instances of ``first``'s kind that ``second`` rejects, read from a
        property whose values ``first`` restricts to a finite set: objects having the property with one of
        those values that ``second``'s constraint on it certainly rejects.

        ``value_exclusions({"properties": {"k": {"enum": ["a", "b"]}}}, {"properties": {"k": {"const": "b"}}})``
        yields ``{"type": "object", "required": ["k"], "properties": {"k": {"enum": ["a"]}}}``.
        """
        for name in self._declared_names(first, 0):
            values = self.values(self._property(first, name, 0))
            if values:
                other = self._property(second, name, 0)
                rejected = [v for v in values if self.rejects(other, v)]
                if rejected:
                    yield {"type": "object", "required": [name], "properties": {name: {"enum": rejected}}}

    def _declared_names(self, schema, depth: int) -> list[str]:
        schema, all_of, _ = self._parts(schema)
        if not isinstance(schema, dict) or depth > DISJOINT_DEPTH:
            return []
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        names = list(properties)
        for part in all_of:
            names += [n for n in self._declared_names(part, depth + 1) if n not in names]
        return names

    # -- over-approximations ------------------------------------------------------------------------
    # Each is computed once per schema object (kept alive in the memo, so its id is not reused); a
    # schema met again while its own approximation is being computed (a $ref cycle) gets SAFE's.

    SAFE = {"types": ALL_TYPES, "values": None, "required": frozenset()}

    def _approximation(self, kind: str, schema):
        key = (kind, id(schema))
        if key in self._memo:
            return self._memo[key][1]
        self._memo[key] = (schema, self.SAFE[kind])  # in progress: a cycle reads the safe answer
        result = getattr(self, f"_{kind}")(schema)
        self._memo[key] = (schema, result)
        return result

    def _parts(self, schema):
        """(the schema with $ref followed (None where it cannot be), allOf parts, anyOf/oneOf branch lists)."""
        for _ in range(DISJOINT_DEPTH):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                break
            schema = self.resolve(schema["$ref"])
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            schema = None
        if not isinstance(schema, dict):
            return schema, [], []
        parts = schema.get("allOf") if isinstance(schema.get("allOf"), list) else []
        choices = [schema[k] for k in ("anyOf", "oneOf") if isinstance(schema.get(k), list) and schema[k]]
        return schema, parts, choices

    def _types(self, schema) -> frozenset:
        schema, all_of, choices = self._parts(schema)
        if schema is False:
            return frozenset()
        if not isinstance(schema, dict):
            return ALL_TYPES
        kinds = self._declared_types(schema)
        values = self._own_values(schema)
        if values is not None:
            kinds &= frozenset().union(*(_json_types(v) for v in values))
        for part in all_of:
            kinds &= self._approximation("types", part)
        for branches in choices:
            kinds &= frozenset().union(*(self._approximation("types", branch) for branch in branches))
        return kinds

    @staticmethod
    def _declared_types(schema: dict) -> frozenset:
        declared = schema.get("type")
        declared = [declared] if isinstance(declared, str) else declared
        if not isinstance(declared, list) or not all(isinstance(t, str) for t in declared):
            return ALL_TYPES
        return frozenset("number" if t == "integer" else t for t in declared) & ALL_TYPES

    def _own_values(self, schema: dict):
        if "const" in schema and self.const_is_keyword:
            return [schema["const"]]
        return schema["enum"] if isinstance(schema.get("enum"), list) else None

    def _values(self, schema):
        """The values an instance may take, None where any value may do."""
        schema, all_of, choices = self._parts(schema)
        if not isinstance(schema, dict):
            return [] if schema is False else None
        known = [self._own_values(schema)] + [self._approximation("values", part) for part in all_of]
        for branches in choices:
            each = [self._approximation("values", branch) for branch in branches]
            known.append(None if None in each else [v for values in each for v in values])
        known = [values for values in known if values is not None]
        if not known:
            return None
        return [v for v in known[0] if all(any(_same_json(v, w) for w in other) for other in known[1:])]

    def _required(self, schema) -> frozenset:
        """Names every object instance has."""
        schema, all_of, choices = self._parts(schema)
        if not isinstance(schema, dict):
            return frozenset()
        own = schema.get("required")
        names = frozenset(n for n in own if isinstance(n, str)) if isinstance(own, list) else frozenset()
        for part in all_of:
            names |= self._approximation("required", part)
        for branches in choices:
            names |= frozenset.intersection(*(self._approximation("required", branch) for branch in branches))
        return names

    def _forbids(self, schema, name: str, depth: int) -> bool:
        """True when no object instance has the property ``name``."""
        if depth > DISJOINT_DEPTH:
            return False
        schema, all_of, choices = self._parts(schema)
        if not isinstance(schema, dict):
            return False
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        if name in properties:
            own = self._parts(properties[name])[0] is False
        else:
            own = schema.get("additionalProperties", True) is False and not schema.get("patternProperties")
        return own or any(self._forbids(part, name, depth + 1) for part in all_of) or \
            any(all(self._forbids(branch, name, depth + 1) for branch in branches) for branches in choices)

    def _negated_presence(self, schema, name: str, depth: int) -> bool:
        """True when a ``not`` of ``schema`` (its own or an ``allOf`` member's) rejects every object having
        ``name``: ``not: {"required": [name], "properties": {name: S}}`` where S is a ``type`` alone that
        every value of ``name`` in ``schema`` already has (SchemaStore's rust-toolchain: path xor channel)."""
        kinds = self._approximation("types", self._property(schema, name, depth))
        return any(_presence_of(negated, name, kinds) for negated in self._nots(schema, depth))

    def _nots(self, schema, depth: int) -> list:
        schema, all_of, _ = self._parts(schema)
        if not isinstance(schema, dict) or depth > DISJOINT_DEPTH:
            return []
        found = [schema["not"]] if "not" in schema else []
        return found + [n for part in all_of for n in self._nots(part, depth + 1)]

    def _property(self, schema, name: str, depth: int):
        """A schema every value of the property ``name`` satisfies (an over-approximation)."""
        schema, all_of, choices = self._parts(schema)
        if not isinstance(schema, dict) or depth > DISJOINT_DEPTH:
            return True
        conjuncts = [_certain_side(schema, name)]
        conjuncts += [self._property(part, name, depth + 1) for part in all_of]
        for branches in choices:
            conjuncts.append({"anyOf": [self._property(branch, name, depth + 1) for branch in branches]})
        conjuncts = [c for c in conjuncts if c is not True and c != {}]
        return {"allOf": conjuncts} if conjuncts else True
