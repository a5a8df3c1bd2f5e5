"""JSON Schema to a regex matching the JSON text of the schema's instances.

The pattern admits what ``json.dumps`` writes (``ensure_ascii`` True or False, with or without a space
after ``,`` and ``:``), object properties in schema order, and no other text. Policies a forced tool
call needs, where JSON Schema itself is looser:

Where a schema's instances cannot all be written as one regex, impl writes a SOUND SUBSET: every
text it admits is an instance, some instances are not admitted. What is refused raises ValueError
naming the keyword and its JSON path, never a wrong regex.

- ``additionalProperties`` absent on an object with ``properties`` forbids extra properties, as
  ``false`` does (a tool's arguments are the declared ones). With ``true``, a schema or
  ``patternProperties`` beside ``properties``, extra keys are not written; a declared property's
  value follows its schema and every ``patternProperties`` schema its name matches. An object schema
  without ``properties`` or ``required`` is a free-form object: any keys, values following
  ``additionalProperties``; under one ``patternProperties`` pattern only its keys (under several, or
  ``propertyNames``, none). ``required`` names it does not declare are declared from
  ``patternProperties``/``additionalProperties``; ``minProperties``/``maxProperties`` and
  ``dependencies``/``dependentRequired``/``dependentSchemas`` are met by construction (optional
  properties made required or left out).
- Any JSON value (``{}``, ``true``, free-form objects, arrays without ``items``) nests at most
  ``FREE_DEPTH`` levels; ``$ref`` cycles unfold at most ``REF_DEPTH`` times, after which the branch
  matches nothing (so a recursive tree ends in an empty array or an omitted optional property).
- A keyword that is no validation keyword of any draft (``id``, ``title``, ``examples``, vendor
  extensions) is an annotation and is ignored, as jsonschema ignores it; a keyword of another type
  (``minLength`` on an integer) constrains nothing there; a validation keyword impl does not
  translate is refused. A ``$ref`` that is not local (``#...``) is refused naming it.
- Keywords beside ``$ref``, ``allOf``, ``anyOf`` and ``oneOf`` are their conjunction
  (``combine.py``): plain parts merged keyword by keyword, ``anyOf``/``oneOf`` distributed over their
  branches. ``if``/``then``/``else`` is ``anyOf`` of ``if``-and-``then`` and "not ``if``"-and-``else``;
  ``not`` and "not ``if``" are sound subsets of the negation (of ``required``, ``type``, ``enum``,
  ``const``); where none is known ``not`` is refused and the ``else`` side is not written.
- ``oneOf`` is exact: branches proved pairwise disjoint (``disjoint.py``: from over-approximations of
  each, through ``$ref``, ``allOf``, ``anyOf`` and nested required properties) are written as they are;
  otherwise branch i is conjoined with, for each branch j it may overlap, ``type: object`` where no
  object is valid for both (non-objects meet object keywords vacuously), the values of branch i that j
  certainly rejects (where branch i's values are a known finite set), or else a negation of branch j:
  branch i's objects whose property (of finitely many values in branch i) has a value branch j
  rejects, or a negation of ``required``, ``type``, ``enum``/``const`` or an ``allOf`` member; the
  first of ``NEGATION_CHOICES`` that leaves branch i an instance. Where no negation is known ``oneOf`` is
  refused naming the two branches (never read as ``anyOf``).
- ``uniqueItems``: the members of an ``enum`` items schema in enum order, each at most once, or else at
  most one item. Exclusive bounds on ``number`` are written ``EXCLUSIVE_MARGIN`` inside; draft 4's
  boolean ``exclusiveMinimum``/``exclusiveMaximum`` are read as draft 4 has them.
- Formats (``formats.py``) are sound subsets, stricter than jsonschema's checkers; a format no draft
  defines (``int32``) is an annotation. ``pattern``/``format`` beside ``minLength``/``maxLength`` only
  where every match's length is allowed.
- Every draft's reading must accept what impl writes, not only jsonschema's: a ``pattern`` is read as
  both ECMA-262 and Python ``re`` read it (``regex_syntax.INNER``: ``\\d`` is ``[0-9]``), and a
  declared name takes every ``patternProperties`` schema either reading may apply; draft 7's
  ``contentEncoding: base64`` is written as base64 text, any other encoding and a JSON
  ``contentMediaType`` are refused; an integral float in an ``integer`` enum is written as the integer
  (draft 4 has no 1.0 integer); a ``$ref`` to a plain-name fragment (``#foo``, an anchor) is refused, and
  one inside an embedded resource (a nested non-fragment ``$id``, draft 4's ``id``) points into it.
  Keywords one draft has and
  another lacks (``dependencies``, ``const``, siblings of ``$ref``) are applied: a stricter reading.

Example: ``json_schema_to_regex({"type": "object", "properties": {"a": {"type": "integer"}}})`` ->
``\\{(?:"a":[ ]?-?(?:0|[1-9][0-9]*))?\\}`` (modulo grouping).
"""
from __future__ import annotations

import itertools
import json
import math
import re
from decimal import Decimal

from . import regex_syntax
from .regex_syntax import INNER, Alt, Anchor, Chars, Concat, Repeat
from .combine import conjunction, conjuncts, merge, normalized, side_schemas
from .disjoint import DISJOINT_DEPTH, Disjoint
from .formats import KNOWN as KNOWN_FORMATS
from .formats import STRING_FORMATS
from .regex_text import (HEX_LOWER, NEVER, char_class, group, natural_range, digit_range, optional,
                         regex_escape, repeat, searches)

FREE_DEPTH = 2
REF_DEPTH = 3
_UNRESOLVED = object()  # what a $ref that points nowhere resolves to
NEGATION_CHOICES = 64  # negations of a oneOf branch tried for one that leaves the other branch an instance

# Keywords of some draft (3 to 2020-12) that constrain instances and that impl does not translate:
# refused, since ignoring one would admit what the schema forbids. Every other keyword impl does not
# know is an annotation (``id``, ``title``, ``examples``, ``markdownDescription``...): jsonschema
# ignores it too, and so does impl.
_UNTRANSLATED = {"multipleOf", "contains", "minContains", "maxContains", "prefixItems",
                 "additionalItems", "unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef",
                 "disallow", "extends", "divisibleBy"}  # the last three: draft 3's
_KEYWORDS_BY_TYPE = {
    "string": {"minLength", "maxLength", "pattern", "contentEncoding", "contentMediaType"},
    "integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "object": {"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
               "minProperties", "maxProperties", "dependencies", "dependentRequired", "dependentSchemas"},
    "array": {"items", "minItems", "maxItems", "uniqueItems"},
    "boolean": set(), "null": set(),
}
_STRING_CHECKS = {"minLength", "maxLength", "pattern"}  # keywords an enum's strings are filtered by
_GENERAL = {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not", "if", "then", "else", "format"}
_TRANSLATED = _GENERAL | set().union(*_KEYWORDS_BY_TYPE.values())

# One JSON string character: raw (json.dumps leaves it), a short escape, \uXXXX of a non-surrogate,
# or a surrogate pair (lone surrogates are not Unicode text).
_HEX = "[0-9a-fA-F]"
STRING_CHAR = group([
    r'[^"\\\x00-\x1f]',
    r'\\["\\/bfnrt]',
    rf"\\u(?:[0-9a-cA-Ce-fE-F]{_HEX}{{3}}|[dD][0-7]{_HEX}{{2}})",
    rf"\\u[dD][89abAB]{_HEX}{{2}}\\u[dD][c-fC-F]{_HEX}{{2}}",
])
_INTEGER = r"-?(?:0|[1-9][0-9]*)"
_BASE64 = "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"  # RFC 4648's alphabet, padded
EXCLUSIVE_MARGIN = Decimal("0.000001")  # how far inside an exclusive bound on a number impl writes
_FRACTION = r"(?:\.[0-9]+)?"
_NUMBER = _INTEGER + _FRACTION + r"(?:[eE][+-]?[0-9]+)?"
# json.dumps writes floats with |x| < 1e-4 as "1e-05" and |x| >= 1e16 as "1e+16".
_TINY_EXPONENT = r"[0-9](?:\.[0-9]+)?[eE]-0*(?:[5-9]|[1-9][0-9]+)"  # below 1e-4
_HUGE_EXPONENT = r"[1-9](?:\.[0-9]+)?[eE]\+?(?:1[6-9]|[2-9][0-9]|[1-9][0-9]{2,})"


class Punctuation:
    """The structural text between JSON tokens under a whitespace policy.

    ``whitespace=None``: json.dumps's two styles, ``,``/``, `` and ``:``/``: ``, nothing else.
    Otherwise ``whitespace`` (a regex) may appear around every ``{ } [ ] , :``.
    """

    def __init__(self, whitespace: str | None):
        if whitespace is None:
            self.comma, self.colon, self.open_pad, self.close_pad = ",[ ]?", ":[ ]?", "", ""
        else:
            if not isinstance(whitespace, str):
                raise ValueError(f"whitespace must be a regex str or None, not {type(whitespace).__name__}")
            regex_syntax.parse(whitespace)
            pad = f"(?:{whitespace})"
            self.comma, self.colon, self.open_pad, self.close_pad = f"{pad},{pad}", f"{pad}:{pad}", pad, pad

    def object(self, members: str) -> str:
        return rf"\{{{self.open_pad}{members}{self.close_pad}\}}"

    def array(self, items: str) -> str:
        return rf"\[{self.open_pad}{items}{self.close_pad}\]"

    def member(self, key: str, value: str) -> str:
        return f"{json_string_literal(key)}{self.colon}{value}"


def json_string_literal(text: str) -> str:
    """The JSON string of ``text`` as json.dumps writes it, with ``ensure_ascii`` either way.

    ``json_string_literal('é"')`` -> ``"(?:é|\\\\u00e9)\\\\""``.
    """
    return '"' + "".join(_char_forms(char) for char in text) + '"'


def _char_forms(char: str) -> str:
    return group([regex_escape(json.dumps(char, ensure_ascii=flag)[1:-1]) for flag in (False, True)])


def json_literal(value, punctuation: Punctuation, path: str) -> str:
    """The JSON text of a constant (``const``, ``enum`` members) in every json.dumps style."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return regex_escape(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path}: non-finite number {value!r} has no JSON text")
        return regex_escape(json.dumps(value))
    if isinstance(value, str):
        return json_string_literal(value)
    if isinstance(value, list):
        return punctuation.array(punctuation.comma.join(
            json_literal(item, punctuation, f"{path}[{i}]") for i, item in enumerate(value)))
    if isinstance(value, dict):
        return punctuation.object(punctuation.comma.join(
            punctuation.member(key, json_literal(item, punctuation, f"{path}.{key}")) for key, item in value.items()))
    raise ValueError(f"{path}: {type(value).__name__} is not a JSON value")


def json_schema_to_regex(schema, *, whitespace: str | None = None) -> str:
    """A regex whose full matches are the JSON texts of ``schema``'s instances (see the module notes).

    ``whitespace``: a regex for the whitespace allowed around ``{ } [ ] , :`` (e.g. ``[ \\n]*``);
    None (the default) admits exactly json.dumps's separators ``,``/``, `` and ``:``/``: ``.
    Raises ValueError naming an unsupported keyword and its JSON path (``$.properties.x``).

    >>> json_schema_to_regex({"type": "boolean"}), json_schema_to_regex({"enum": ["a", 1]})
    ('(?:(?:true|false))', '(?:"a"|1)')
    """
    schema = rebased_refs(schema)
    return _Translator(schema, Punctuation(whitespace)).value(schema, "$", ())


def rebased_refs(schema):
    """``schema`` as the translator reads it: local ``$ref``s inside embedded resources pointing from the
    document root (``_rebased``). ``rebased_refs({"type": "string"})`` -> ``{"type": "string"}``."""
    return _rebased(schema, "", None, _Draft(schema))


class _Draft:
    """What the root's ``$schema`` says of identifiers: draft 3/4 name a resource ``id``, later drafts
    ``$id``; up to draft 7 an identifier beside ``$ref`` is ignored with every other sibling."""

    def __init__(self, root):
        uri = root.get("$schema", "") if isinstance(root, dict) else ""
        uri = uri if isinstance(uri, str) else ""
        self.id_key = "id" if "draft-04" in uri or "draft-03" in uri else "$id"
        self.ref_hides_siblings = any(f"draft-0{n}" in uri for n in (3, 4, 6, 7))

    def resource_id(self, node: dict) -> bool:
        if self.ref_hides_siblings and "$ref" in node:
            return False
        value = node.get(self.id_key)
        return isinstance(value, str) and not value.startswith("#")


def _rebased(node, pointer: str, resource: str | None, draft: _Draft):
    """``node`` with every local ``$ref`` inside an embedded resource (a nested non-fragment identifier)
    rewritten to point from the document root: there ``#`` is that resource, not the document.

    ``{"items": {"$id": "x.json", "$ref": "#/$defs/a"}}`` -> ``{"items": {"$id": "x.json", "$ref":
    "#/items/$defs/a"}}`` (a copy: the caller's schema is left as it is).
    """
    if isinstance(node, list):
        return [_rebased(item, f"{pointer}/{index}", resource, draft) for index, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    if pointer and draft.resource_id(node):
        resource = pointer
    result = {key: _rebased(value, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}", resource, draft)
              for key, value in node.items()}
    ref = node.get("$ref")
    if resource is not None and isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        result["$ref"] = "#" + resource + ref[1:]
    return result


class _Translator:
    def __init__(self, root, punctuation: Punctuation):
        self.root = root
        self.p = punctuation
        self._any: dict[int, str] = {}
        self.disjoint = Disjoint(root, self._reference_target)

    def _reference_target(self, ref):
        """What a local ``$ref`` points to, None where it points nowhere impl can follow."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        try:
            target = self._pointed(ref)
        except ValueError:
            return None
        return None if target is _UNRESOLVED else target

    # -- dispatch ----------------------------------------------------------------------------

    def value(self, schema, path: str, refs: tuple[str, ...]) -> str:
        if schema is True or schema == {}:
            return self.any_value(FREE_DEPTH)
        if schema is False:
            return NEVER
        schema = self._prepared(schema, path)
        constraining = {k for k in schema if k in _TRANSLATED}
        if not constraining:
            return self.any_value(FREE_DEPTH)
        parts = conjuncts(schema, constraining)
        if not parts:
            return self.any_value(FREE_DEPTH)
        if len(parts) > 1:
            return self.conjunction(parts, path, refs)
        part = parts[0]
        if "allOf" in schema or not isinstance(part, dict):
            return self.value(part, f"{path}.allOf[0]", refs)
        if "$ref" in part:
            return self.reference(part["$ref"], path, refs)
        for combinator in ("anyOf", "oneOf"):
            if combinator in part:
                return self.combination(part, combinator, path, refs)
        schema = part
        if "const" in schema or "enum" in schema:
            return self.constants(schema, path)
        types = schema.get("type", self._implied_types(schema))
        if isinstance(types, str):
            types = [types]
        if not isinstance(types, list) or not types or any(t not in _KEYWORDS_BY_TYPE for t in types):
            raise ValueError(f"unsupported type {schema.get('type')!r} at {path}.type")
        return group(getattr(self, f"type_{t}")(schema, path, refs) for t in types)

    def _prepared(self, schema, path: str) -> dict:
        """A schema object checked for untranslated keywords, draft 4's bounds read, ``not``/``if`` moved
        into ``allOf`` and a format no draft defines dropped (an annotation)."""
        if not isinstance(schema, dict):
            raise ValueError(f"{path}: a schema must be an object or a boolean, not {type(schema).__name__}")
        for keyword in schema:
            if keyword in _UNTRANSLATED:
                raise ValueError(f"unsupported keyword {keyword!r} at {path}")
        schema = self._without_conditionals(normalized(schema), path)
        if "format" in schema and schema["format"] not in STRING_FORMATS:
            if schema["format"] in KNOWN_FORMATS:
                raise ValueError(f"unsupported format {schema['format']!r} at {path}.format")
            schema = {k: v for k, v in schema.items() if k != "format"}
        return schema

    def _without_conditionals(self, schema: dict, path: str) -> dict:
        """``schema`` with ``not`` and ``if``/``then``/``else`` moved into ``allOf`` as schemas impl writes.

        ``if``/``then``/``else`` is ``anyOf: [allOf(if, then), allOf(not if, else)]``, with "not if" a sound
        subset of the negation (see ``_negation``); where none is known the ``else`` side is left out.
        """
        if not {"not", "if", "then", "else"} & schema.keys():
            return schema
        rest = {k: v for k, v in schema.items() if k not in ("not", "if", "then", "else")}
        added = [self._negation(schema["not"], f"{path}.not")] if "not" in schema else []
        if "if" in schema:
            condition = self._resolved(schema["if"])
            sides = [conjunction([condition, schema.get("then", True)])]
            try:
                sides.append(conjunction([self._negation(condition, f"{path}.if"), schema.get("else", True)]))
            except ValueError:
                pass  # no negation known: instances taking the else side are not written
            added.append({"anyOf": sides})
        return {**rest, "allOf": [*rest.get("allOf", []), *added]}

    def _negation(self, schema, path: str):
        """A schema admitting only instances ``schema`` rejects (a sound subset of its negation): the first
        of ``_negations``. Raises ValueError naming ``not`` and ``path`` where none is known."""
        for negation in self._negations(schema):
            return negation
        raise ValueError(f"unsupported keyword 'not' at {path} (only of 'required', 'type', 'enum', 'const' "
                         f"and boolean schemas, or of an allOf member)")

    def _negations(self, schema, depth: int = 0):
        """Schemas admitting only instances ``schema`` rejects, each a sound subset of its negation.

        A schema is the conjunction of its keywords, so the negation of one keyword is a subset of its
        negation: ``{"required": ["a", ...], ...}`` -> ``{"type": "object", "properties": {"a": false}}``
        for each name; ``{"type": T, ...}`` or an ``enum``/``const`` of values of types T -> the other
        types; ``true``/``{}`` -> ``false``; ``false`` -> ``true``; then those of each ``allOf`` member
        (not (A and B) holds wherever not A does), then of ``anyOf``/``oneOf`` the conjunction of each
        branch's first negation, to ``DISJOINT_DEPTH`` levels.
        """
        schema = self._resolved(schema)
        if schema is True or schema == {}:
            yield False
            return
        if not isinstance(schema, dict):
            yield True
            return
        required = schema.get("required")
        for name in required if isinstance(required, list) else []:
            if isinstance(name, str):  # `required` holds for every non-object
                yield {"type": "object", "properties": {name: False}}
        kinds = _type_set(schema) if isinstance(schema.get("type"), (str, list)) else None  # integer as number
        values = _values(schema) if self.disjoint.const_is_keyword or "const" not in schema else None
        if kinds is None and values is not None:
            kinds = {t for value in values for t in _KEYWORDS_BY_TYPE if t != "integer" and _has_type(value, t)}
        if kinds is not None:
            others = [t for t in _KEYWORDS_BY_TYPE if ("number" if t == "integer" else t) not in kinds]
            yield {"type": others} if others else False
        members = schema.get("allOf") if isinstance(schema.get("allOf"), list) else []
        for member in members if depth < DISJOINT_DEPTH else []:
            yield from self._negations(member, depth + 1)
        for combinator in ("anyOf", "oneOf"):  # not (A or B) is (not A) and (not B); oneOf implies anyOf
            branches = schema.get(combinator)
            if isinstance(branches, list) and branches and depth < DISJOINT_DEPTH:
                firsts = [next(self._negations(branch, depth + 1), None) for branch in branches]
                if None not in firsts:
                    yield conjunction(firsts)

    def conjunction(self, parts: list, path: str, refs: tuple[str, ...]) -> str:
        """The schemas ``parts`` all at once: ``anyOf``/``oneOf`` distributed over their branches, the
        plain parts merged keyword by keyword (``combine.merge``)."""
        plain, choice, refs = self._flattened(parts, path, refs)
        if plain is False:
            return NEVER
        if choice is not None:
            combinator, others = choice
            branches = [conjunction([plain, *others, branch]) for branch in combinator[1]]
            return self.combination({combinator[0]: branches}, combinator[0], path, refs, own=combinator[1])
        return self.value(plain, path, refs)

    def _flattened(self, parts: list, path: str, refs: tuple[str, ...]):
        """(the plain parts merged, None or ((combinator, branches), other parts), refs followed)."""
        pending, plain, choice = list(parts), {}, None
        while pending:
            part = pending.pop(0)
            while isinstance(part, dict) and set(part) == {"$ref"}:
                ref = part["$ref"]
                if not isinstance(ref, str) or not ref.startswith("#"):
                    raise ValueError(f"unsupported $ref {ref!r} at {path} (only local '#/...' references)")
                if refs.count(ref) >= REF_DEPTH:
                    return False, None, refs
                part, refs = self._pointed(ref, path), refs + (ref,)
                if part is _UNRESOLVED:
                    raise ValueError(f"unresolvable $ref {ref!r} at {path}")
            if part is True or part == {}:
                continue
            if part is False or plain is False:
                return False, None, refs
            part = self._prepared(part, path)
            constraining = {k for k in part if k in _TRANSLATED}
            split = conjuncts(part, constraining)
            if {"$ref", "allOf"} & part.keys() or len(split) != 1:
                pending[:0] = split
                continue
            part = split[0] if split else {}
            combinators = [k for k in ("anyOf", "oneOf") if k in part]
            if combinators and choice is None:
                branches = part[combinators[0]]
                if not isinstance(branches, list) or not branches:
                    raise ValueError(f"{path}.{combinators[0]}: expected a non-empty array")
                choice = ((combinators[0], branches), [])
            elif combinators:
                choice[1].append(part)
            else:
                try:
                    plain = merge(plain, part)
                except ValueError as exc:
                    raise ValueError(f"unsupported {exc} at {path}") from None
        return plain, choice, refs

    def _plain(self, schema, refs: tuple[str, ...]):
        """``schema`` as one plain schema (refs followed, conjunctions merged), or itself if it has a choice."""
        try:
            plain, choice, _ = self._flattened([schema], "$", refs)
        except ValueError:
            return schema
        return schema if choice is not None else plain

    @staticmethod
    def _implied_types(schema: dict) -> list[str]:
        implied = [t for t, keywords in _KEYWORDS_BY_TYPE.items() if keywords & schema.keys()]
        if "number" in implied:
            implied.remove("integer")  # every integer is a number: one branch is enough
        return implied or list(_KEYWORDS_BY_TYPE)

    # -- general keywords --------------------------------------------------------------------

    def reference(self, ref, path: str, refs: tuple[str, ...]) -> str:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise ValueError(f"unsupported $ref {ref!r} at {path} (only local '#/...' references)")
        if refs.count(ref) >= REF_DEPTH:
            return NEVER
        target = self._pointed(ref, path)
        if target is _UNRESOLVED:
            raise ValueError(f"unresolvable $ref {ref!r} at {path}")
        return self.value(target, ref, refs + (ref,))

    def _pointed(self, ref: str, path: str = "$"):
        """The part of the root schema a local ``#/a/b`` reference points to, or ``_UNRESOLVED``.

        Raises ValueError for a plain-name fragment (``#foo``: an ``$anchor`` or draft 4-7's ``"id": "#foo"``).
        """
        if ref != "#" and not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref!r} at {path} (a plain-name fragment, an anchor: "
                             f"only '#/...' pointers)")
        target = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return _UNRESOLVED
        return target

    def combination(self, schema: dict, combinator: str, path: str, refs, own: list | None = None) -> str:
        """``anyOf``/``oneOf`` of ``schema``; ``own``: the branches as written, before keywords beside the
        combinator were distributed into them (a branch's negation is taken from its own keywords)."""
        branches = schema[combinator]
        if not isinstance(branches, list) or not branches:
            raise ValueError(f"{path}.{combinator}: expected a non-empty array")
        if combinator == "oneOf":
            branches = self._exclusive_branches(branches, own or branches, path, refs)
        return group(self.value(branch, f"{path}.{combinator}[{i}]", refs) for i, branch in enumerate(branches))

    def _exclusive_branches(self, branches: list, own: list, path: str, refs) -> list:
        """``oneOf``'s branches, each made to exclude the others: branch i is conjoined with a sound subset
        of the negation of every branch j it is not proved disjoint from (``disjoint.py``), so an instance
        written for branch i is valid for it and for no other. Raises naming ``oneOf``, ``path`` and the
        two branches where no negation is known."""
        written = []
        for i, first in enumerate(branches):
            excluded = []
            for j, other in enumerate(branches):
                if j == i or self.disjoint.proved(first, other):
                    continue
                if self.disjoint.objects_proved(first, other):  # only non-objects may match both
                    excluded.append({"type": "object"})
                    continue
                values = self.disjoint.values(first)
                if values is not None:  # branch i's values, those branch j certainly rejects: exact
                    rejected = [v for v in values if self.disjoint.rejects(other, v)]
                    excluded.append({"enum": rejected} if rejected else False)
                    continue
                # A negation that leaves branch i some instance, else any (branch i then writes nothing).
                negations = list(itertools.islice(itertools.chain(
                    self.disjoint.value_exclusions(first, other), self._negations(own[j])), NEGATION_CHOICES))
                kept = [n for n in negations if not self.disjoint.proved(first, n)] or negations
                if kept:
                    excluded.append(kept[0])
                else:
                    raise ValueError(f"unsupported keyword 'oneOf' at {path}: branches {min(i, j)} and {max(i, j)} "
                                     f"may both match one instance (not proved disjoint by types, values, or a "
                                     f"required property's, and no negation of required, type, enum or const)")
            written.append(conjunction([branches[i], *excluded]))
        return written

    def _resolved(self, schema):
        """``schema`` with local ``$ref``s followed (a cycle or an unresolvable one stops at the ref)."""
        seen = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
            ref = schema["$ref"]
            if ref in seen:
                return schema
            seen.add(ref)
            target = self._pointed(ref)
            if target is _UNRESOLVED:
                return schema
            schema = target
        return schema

    def constants(self, schema: dict, path: str) -> str:
        if "const" in schema:
            values, where = [schema["const"]], f"{path}.const"
        else:
            values, where = schema["enum"], f"{path}.enum"
            if not isinstance(values, list) or not values:
                raise ValueError(f"{where}: expected a non-empty array")
        others = {k for k in schema if k in _TRANSLATED - {"const", "enum", "type"} - _STRING_CHECKS}
        if others:
            raise ValueError(f"unsupported keyword {sorted(others)[0]!r} beside {where.rsplit('.', 1)[1]!r} at {path}")
        # a member breaking minLength/maxLength/pattern (under both readings of a pattern) is no instance
        values = [v for v in values if not isinstance(v, str) or self._string_allowed(schema, v, path)]
        types = schema.get("type")
        types = [types] if isinstance(types, str) else types
        # enum and type both apply: a member of another type is not an instance. A float with no fraction
        # is an "integer" from draft 6 on but not in draft 4: written as the integer, valid in both.
        if types is not None and "integer" in types and "number" not in types:
            values = [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]
        return group(json_literal(v, self.p, f"{where}[{i}]") for i, v in enumerate(values)
                     if types is None or any(_has_type(v, t) for t in types))

    def _string_allowed(self, schema: dict, text: str, path: str) -> bool:
        """Whether ``text`` meets ``schema``'s minLength, maxLength and pattern (code points, as JSON Schema
        counts them; the pattern under both ECMA-262 and Python ``re``)."""
        low, high = self._count(schema, "minLength", path), self._count(schema, "maxLength", path, None)
        if len(text) < low or (high is not None and len(text) > high):
            return False
        return "pattern" not in schema or _searches(schema["pattern"], text, f"{path}.pattern")

    def any_value(self, depth: int) -> str:
        if depth not in self._any:
            self._any[depth] = self._any_value(depth)
        return self._any[depth]

    def _any_value(self, depth: int) -> str:
        scalars = [self.type_string({}, "", ()), _NUMBER, "true", "false", "null"]
        if depth == 0:
            return group(scalars)
        inner = self.any_value(depth - 1)
        return group(scalars + [self.p.array(self._items(inner, 0, None)),
                                self.p.object(self._items(f"{self.type_string({}, '', ())}{self.p.colon}{inner}", 0, None))])

    # -- types -------------------------------------------------------------------------------

    def type_null(self, schema, path, refs) -> str:
        return "null"

    def type_boolean(self, schema, path, refs) -> str:
        return "(?:true|false)"

    def type_string(self, schema, path, refs) -> str:
        low, high = self._count(schema, "minLength", path), self._count(schema, "maxLength", path, None)
        lengths = "minLength" in schema or "maxLength" in schema
        media = schema.get("contentMediaType")
        if isinstance(media, str) and (media.split(";")[0].strip() == "application/json" or media.endswith("+json")):
            raise ValueError(f"unsupported keyword 'contentMediaType' {media!r} at {path} (draft 7 lets a validator "
                             f"check that the string is a JSON document)")
        if "contentEncoding" in schema:
            if schema["contentEncoding"] != "base64":
                raise ValueError(f"unsupported keyword 'contentEncoding' {schema['contentEncoding']!r} at {path}")
            if lengths or {"format", "pattern"} & schema.keys():
                raise ValueError(f"unsupported keyword 'contentEncoding' beside format, pattern or lengths at {path}")
            return f'"{_BASE64}"'
        if "format" in schema:
            if "pattern" in schema:
                raise ValueError(f"unsupported keyword 'format' beside a pattern at {path}")
            written = STRING_FORMATS[schema["format"]]
            if lengths and not _lengths_within(regex_syntax.parse(written), low, high):
                raise ValueError(f"unsupported keyword 'format' beside minLength/maxLength at {path}")
            return f'"{written}"'
        if "pattern" in schema:
            pattern = _StringPattern(schema["pattern"], f"{path}.pattern")
            if lengths and not (pattern.anchored_start and pattern.anchored_end
                                and _lengths_within(Concat(tuple(pattern.body)), low, high)):
                raise ValueError(f"unsupported keyword 'pattern' beside minLength/maxLength at {path} "
                                 f"(only a ^...$ pattern whose every match has an allowed length)")
            return '"' + pattern.regex() + '"'
        return '"' + repeat(STRING_CHAR, low, high) + '"'

    def type_integer(self, schema, path, refs) -> str:
        low, high = self._bound(schema, "minimum", path), self._bound(schema, "maximum", path)
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
        above, below = self._bound(schema, "exclusiveMinimum", path), self._bound(schema, "exclusiveMaximum", path)
        if above is not None:
            low = max(math.floor(above) + 1, low if low is not None else -math.inf)
        if below is not None:
            high = min(math.ceil(below) - 1, high if high is not None else math.inf)
        if low is None and high is None:
            return _INTEGER
        return _signed(low, high, natural_range, smallest_negative=1)

    def type_number(self, schema, path, refs) -> str:
        # Decimal(repr(x)): the bound as written (0.1 stays 0.1, not its binary expansion).
        low, high, above, below = (None if b is None else Decimal(repr(b) if isinstance(b, float) else b)
                                   for b in (self._bound(schema, name, path) for name in
                                             ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")))
        # An exclusive bound b is written as the inclusive b +/- EXCLUSIVE_MARGIN: a sound subset.
        if above is not None:
            low = max(above + EXCLUSIVE_MARGIN, low if low is not None else above)
        if below is not None:
            high = min(below - EXCLUSIVE_MARGIN, high if high is not None else below)
        if low is None and high is None:
            return _NUMBER
        if low is not None and high is not None and low > high:
            return NEVER
        signed = _signed(low, high, _decimal_magnitudes, smallest_negative=0)
        # json.dumps(-0.0) is "-0.0": inside a range starting at 0 it is valid too.
        return group([signed, r"-0(?:\.0+)?"]) if low == 0 else signed

    def type_array(self, schema, path, refs) -> str:
        items = schema.get("items", True)
        if isinstance(items, list):
            raise ValueError(f"unsupported keyword 'items' as an array (tuple validation) at {path}.items")
        low, high = self._count(schema, "minItems", path), self._count(schema, "maxItems", path, None)
        if schema.get("uniqueItems") is True:
            return self._unique_items(items, low, high, path, refs)
        item = self.value(items, f"{path}.items", refs) if items is not True else self.any_value(FREE_DEPTH - 1)
        return self.p.array(self._items(item, low, high))

    def _items(self, item: str, low: int, high: int | None) -> str:
        if high is not None and high < low:
            return NEVER
        if high == 0:
            return ""
        rest = repeat(self.p.comma + item, max(low - 1, 0), None if high is None else high - 1)
        return item + rest if low > 0 else optional(item + rest)

    def _unique_items(self, items, low: int, high: int | None, path: str, refs) -> str:
        """Arrays with ``uniqueItems``, distinct by construction (a sound subset): when the items are an
        ``enum``/``const``, its members in enum order, each at most once; otherwise at most one item.

        ``{"uniqueItems": true, "items": {"enum": ["a", "b"]}}`` -> ``[]``, ``["a"]``, ``["b"]``, ``["a","b"]``.
        """
        plain = self._plain(items, refs)
        values = _values(plain)
        if values is not None and set(plain) <= {"enum", "const", "type"}:
            distinct = []
            for value in values:
                if not any(_same_json(value, seen) for seen in distinct):
                    distinct.append(value)
            types = plain.get("type")
            types = [types] if isinstance(types, str) else types
            members = [json_literal(v, self.p, f"{path}.items") for v in distinct
                       if types is None or any(_has_type(v, t) for t in types)]
            if high is None or high >= len(members):
                if low > 1:
                    raise ValueError(f"unsupported keyword 'uniqueItems' with minItems {low} at {path}")
                return self.p.array(self._ordered_members([(False, member) for member in members], low == 1))
        if low > 1:
            raise ValueError(f"unsupported keyword 'uniqueItems' with minItems {low} at {path} "
                             f"(distinct items are written only from an enum, or one at most)")
        item = self.value(items, f"{path}.items", refs) if items is not True else self.any_value(FREE_DEPTH - 1)
        return self.p.array(self._items(item, low, min(1, high if high is not None else 1)))

    def type_object(self, schema, path, refs) -> str:
        """An object of the declared properties, or else a free-form object (see ``_free_object``).

        Declared: ``properties`` and then the ``required`` names it lacks, each value following what
        ``combine.side_schemas`` gathers (its ``properties`` entry and the ``patternProperties`` its name
        matches, or ``additionalProperties``); a name ``propertyNames`` rejects is never written.
        Keys ``patternProperties`` allow beside declared ones are not written: a sound subset.
        """
        schema = self._dependencies_applied(schema, path)
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict):
            raise ValueError(f"{path}.properties: expected an object")
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            raise ValueError(f"{path}.required: expected an array of strings")
        names = list(dict.fromkeys([*properties, *required]))
        low = self._count(schema, "minProperties", path)
        high = self._count(schema, "maxProperties", path, None)
        if "properties" not in schema and not required:
            return self._free_object(schema, low, high, path, refs)
        allowed = [name for name in names if self._name_allowed(schema, name, path)]
        if any(name not in allowed for name in required) or (high is not None and high < len(required)):
            return NEVER
        # Counts are met by construction (a sound subset): the first optional properties made required up
        # to minProperties, the last ones left out down to maxProperties.
        optional_names = [name for name in allowed if name not in required]
        if low > len(allowed):
            raise ValueError(f"unsupported keyword 'minProperties' above the declared properties at {path}")
        required = [*required, *optional_names[:max(0, low - len(required))]]
        if high is not None:
            allowed = [name for name in allowed if name in required or name in optional_names[:high - len(required)]]
        members = [(name in required, self.p.member(name, self.value(
            conjunction(side_schemas(schema, name)), f"{path}.properties.{name}", refs))) for name in allowed]
        return self.p.object(self._ordered_members(members))

    def _dependencies_applied(self, schema: dict, path: str) -> dict:
        """``schema`` with ``dependencies``/``dependentRequired``/``dependentSchemas`` of a property met by
        construction (a sound subset): a required property's dependencies are required, or its schema
        conjoined; a property that is not required is not written.

        ``{"properties": {"a": {}}, "dependentRequired": {"a": ["b"]}}`` -> ``a`` never written.
        """
        dependent = {}
        for keyword in ("dependencies", "dependentRequired", "dependentSchemas"):
            given = schema.get(keyword, {})
            if not isinstance(given, dict):
                raise ValueError(f"{path}.{keyword}: expected an object")
            dependent.update(given)
        if not dependent:
            return schema
        result = {k: v for k, v in schema.items() if k not in ("dependencies", "dependentRequired", "dependentSchemas")}
        properties = dict(result.get("properties", {}))
        required, added = list(result.get("required", [])), []
        for name in required:  # grows as it goes: the dependencies of a dependency are required too
            needs = dependent.get(name, [])
            if isinstance(needs, list):
                required += [n for n in needs if n not in required]
            else:
                added.append(needs)
        for name in dependent:
            if name not in required:
                properties[name] = False
        result["properties"], result["required"] = properties, required
        if added:
            merged = self._plain(conjunction([result, *added]), ())
            if not isinstance(merged, dict) or set(merged) & {"anyOf", "oneOf", "allOf", "$ref"}:
                raise ValueError(f"unsupported keyword 'dependencies' with a schema at {path}")
            return merged
        return result

    def _name_allowed(self, schema: dict, name: str, path: str) -> bool:
        names = self._resolved(schema.get("propertyNames", True))
        if names is True or names == {}:
            return True
        if names is False:
            return False
        keys = {k for k in names if k in _TRANSLATED}
        if keys <= {"type", "pattern", "enum", "const", "minLength", "maxLength"}:
            if "const" in names or "enum" in names:
                return any(_same_json(name, v) for v in _values(names))
            fits = names.get("minLength", 0) <= len(name) <= names.get("maxLength", len(name))
            return fits and _has_type(name, names.get("type", "string")) and \
                ("pattern" not in names or _searches(names["pattern"], name, f"{path}.propertyNames.pattern"))
        raise ValueError(f"unsupported keyword 'propertyNames' of {sorted(keys)} at {path}")

    def _free_object(self, schema: dict, low: int, high: int | None, path: str, refs) -> str:
        """An object without declared properties: any keys, each value following ``additionalProperties``
        (or any JSON value). Under ``patternProperties`` only keys of its single pattern are written, each
        value following that pattern's schema, and with several patterns or ``propertyNames`` no key (a
        sound subset: ``{}``)."""
        patterns = schema.get("patternProperties", {})
        extra = schema.get("additionalProperties", True)
        if not isinstance(patterns, dict):
            raise ValueError(f"{path}.patternProperties: expected an object")
        if "propertyNames" in schema or len(patterns) > 1 or extra is False and not patterns:
            return self.p.object("") if low == 0 else NEVER
        if patterns:
            (pattern, sub), = patterns.items()
            key = '"' + _StringPattern(pattern, f"{path}.patternProperties").regex() + '"'
            value = self.value(sub, f"{path}.patternProperties.{pattern}", refs)
        else:
            key = self.type_string({}, "", ())
            value = self.any_value(FREE_DEPTH - 1) if extra is True else \
                self.value(extra, f"{path}.additionalProperties", refs)
        return self.p.object(self._items(f"{key}{self.p.colon}{value}", low, high))

    def _ordered_members(self, members: list[tuple[bool, str]], at_least_one: bool = False) -> str:
        """Members in schema order, each optional one present or not, separated by commas.

        The first member written is any optional one before the first required one (or that
        required one); after it, every later member is ``(,member)?`` or ``,member``: O(n * r) text
        for n members and r optional ones before the first required, never 2^n.
        """
        tails = [""]  # from the last member's (nothing) back: what follows each member
        for is_required, member in reversed(members[1:]):
            written = self.p.comma + member if is_required else optional(self.p.comma + member)
            tails.append(self._followed(written, tails[-1]))
        tails.reverse()
        firsts = []
        for index, (is_required, member) in enumerate(members):
            firsts.append(member + tails[index])
            if is_required:
                return group(firsts)
        if at_least_one:
            return group(firsts) if firsts else NEVER
        return optional(group(firsts)) if firsts else ""

    @staticmethod
    def _followed(head: str, rest: str) -> str:
        """``head`` and then ``rest``: the one place a member's text meets what follows it (the later
        members of ``_ordered_members``, shared by every earlier member's alternative)."""
        return head + rest

    @staticmethod
    def _count(schema: dict, keyword: str, path: str, default=0):
        value = schema.get(keyword, default)
        if value is not default and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ValueError(f"{path}.{keyword}: expected a non-negative integer, found {value!r}")
        return value

    @staticmethod
    def _bound(schema: dict, keyword: str, path: str):
        value = schema.get(keyword)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            raise ValueError(f"{path}.{keyword}: expected a finite number, found {value!r}")
        return value


def _searches(pattern, text: str, path: str) -> bool:
    """Whether ``pattern`` occurs in ``text`` under both ECMA-262 and Python ``re`` (regex_syntax's INNER)."""
    try:
        return searches(pattern, text, INNER)
    except (ValueError, re.error, TypeError) as exc:
        raise ValueError(f"unsupported pattern at {path}: {exc}") from None


def _lengths_within(node, low: int, high: int | None) -> bool:
    """Whether every string ``node`` matches has between ``low`` and ``high`` (None: any) characters."""
    shortest, longest = _length_range(node)
    return shortest >= low and (high is None or (longest is not None and longest <= high))


def _length_range(node) -> tuple[int, int | None]:
    """(fewest, most or None) characters of a match of a regex node: ``a[0-9]{2,3}`` -> (3, 4)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Anchor):
        return 0, 0
    if isinstance(node, Concat):
        ranges = [_length_range(item) for item in node.items]
        most = [m for _, m in ranges]
        return sum(f for f, _ in ranges), None if None in most else sum(most)
    if isinstance(node, Alt):
        ranges = [_length_range(item) for item in node.items]
        most = [m for _, m in ranges]
        return min(f for f, _ in ranges), None if None in most else max(most)
    fewest, most = _length_range(node.item)
    return fewest * node.min, None if most is None or node.max is None else most * node.max


def _type_set(schema: dict) -> set[str] | None:
    """The JSON types ``schema`` declares ("integer" counted as "number"), None when it declares none."""
    types = schema.get("type")
    if types is None:
        return None
    types = {types} if isinstance(types, str) else set(types) if isinstance(types, list) else None
    return None if types is None else {"number" if t == "integer" else t for t in types}


def _values(schema) -> list | None:
    """The values a ``const``/``enum`` schema allows, None when it is not one."""
    if isinstance(schema, dict) and "const" in schema:
        return [schema["const"]]
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list):
        return schema["enum"]
    return None


def _same_json(first, second) -> bool:
    """JSON equality, erring towards "same": 1 and 1.0 are equal, True and 1 are not."""
    if isinstance(first, bool) or isinstance(second, bool):
        return first is second
    return first == second


def _has_type(value, type_name: str) -> bool:
    """JSON Schema's type test: ``_has_type(2.0, "integer")`` -> True, ``_has_type(True, "number")`` -> False."""
    if type_name in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return type_name == "number" or isinstance(value, int) or value.is_integer()
    python_types = {"string": str, "object": dict, "array": list, "boolean": bool, "null": type(None)}
    return isinstance(value, python_types.get(type_name, ()))


def _signed(low: int | None, high: int | None, magnitudes, smallest_negative: int) -> str:
    """Numbers in low..high (None: unbounded), where ``magnitudes(a, b)`` writes |x| in a..b.

    ``_signed(-5, 20, natural_range, 1)`` -> ``(?:(?:[0-9]|1[0-9]|20)|-[1-5])``.
    """
    parts = []
    if high is None or high >= 0:
        parts.append(magnitudes(max(low, 0) if low is not None else 0, high))
    if low is None or low < 0:
        bottom = smallest_negative if high is None else max(-high, smallest_negative)
        parts.append("-" + magnitudes(bottom, None if low is None else -low))
    return group(parts)


def _decimal_magnitudes(low: Decimal, high: Decimal | None) -> str:
    r"""Non-negative decimals (json.dumps style) in low..high (high None: unbounded).

    ``_decimal_magnitudes(Decimal("0.5"), Decimal(2))`` ->
    ``(?:0\.(?:[5-9][0-9]*)|1(?:\.[0-9]+)?|2(?:\.0*)?)`` (modulo grouping).
    """
    low_int, low_digits = _split_decimal(low)
    if high is None:
        parts = [natural_range(low_int + 1, None) + _FRACTION, str(low_int) + _fraction(low_digits, None)]
        if low <= Decimal("1e16"):
            parts.append(_HUGE_EXPONENT)
    else:
        high_int, high_digits = _split_decimal(high)
        if high_int == low_int:
            parts = [str(low_int) + _fraction(low_digits, high_digits)]
        else:
            parts = [str(low_int) + _fraction(low_digits, None),
                     natural_range(low_int + 1, high_int - 1) + _FRACTION if high_int > low_int + 1 else NEVER,
                     str(high_int) + _fraction("", high_digits)]
    if low == 0 and (high is None or high >= Decimal("1e-4")):
        parts.append(_TINY_EXPONENT)  # json.dumps writes 0.00001 as 1e-05
    return group(p for p in parts if not p.endswith(NEVER))


def _split_decimal(value: Decimal) -> tuple[int, str]:
    """Integer part and fraction digits without trailing zeros: Decimal("12.50") -> (12, "5")."""
    integer = int(value)
    fraction = format(value - integer, "f").partition(".")[2].rstrip("0")
    return integer, fraction


def _fraction(low: str, high: str | None) -> str:
    """An optional ``.digits`` whose value 0.digits lies in 0.low..0.high (high None: below 1)."""
    digits = _fraction_digits(low, high)
    if digits == NEVER:
        return "" if low == "" else NEVER
    return (optional(r"\." + digits) if low == "" else r"\." + digits)


def _fraction_digits(low: str, high: str | None) -> str:
    """Non-empty digit strings d with 0.low <= 0.d <= 0.high (low/high without trailing zeros)."""
    if high == "":
        return "0+" if low == "" else NEVER
    first_low, first_high = (int(low[0]) if low else 0), (int(high[0]) if high is not None else 9)
    parts = []
    for digit in range(first_low, first_high + 1):
        rest_low = low[1:] if low and digit == first_low else ""
        rest_high = high[1:] if high is not None and digit == first_high else None
        if rest_low == "" and rest_high is None:
            parts.append(f"{digit}[0-9]*")
        else:
            rest = _fraction_digits(rest_low, rest_high)
            # The digits may stop here only when what is left of the lower bound is nothing.
            tails = ([rest] if rest != NEVER else []) + ([""] if rest_low == "" else [])
            if tails:
                parts.append(f"{digit}{group(tails)}" if tails != [""] else str(digit))
    return group(parts) if parts else NEVER


class _StringPattern:
    """A ``pattern`` (Python ``re`` semantics, searched anywhere as JSON Schema says) rewritten to
    match the JSON-encoded text of the strings it matches."""

    def __init__(self, pattern, path: str):
        if not isinstance(pattern, str):
            raise ValueError(f"{path}: expected a string")
        try:
            node = regex_syntax.parse(pattern, INNER)
        except ValueError as exc:
            raise ValueError(f"unsupported pattern at {path}: {exc}") from None
        items = list(node.items) if isinstance(node, Concat) else [node]
        self.anchored_start = bool(items) and isinstance(items[0], Anchor) and items[0].kind == "^"
        self.anchored_end = bool(items) and isinstance(items[-1], Anchor) and items[-1].kind == "$"
        self.body = items[self.anchored_start:len(items) - self.anchored_end]
        self.where = path

    def regex(self) -> str:
        any_text = repeat(STRING_CHAR, 0, None)
        body = "".join(self.node(item) for item in self.body)
        return ("" if self.anchored_start else any_text) + body + ("" if self.anchored_end else any_text)

    def node(self, node) -> str:
        if isinstance(node, Chars):
            return encoded_chars(node.ranges)
        if isinstance(node, Concat):
            return "".join(self.node(item) for item in node.items)
        if isinstance(node, Alt):
            return "(?:" + "|".join(self.node(item) for item in node.items) + ")"
        if isinstance(node, Repeat):
            return repeat(f"(?:{self.node(node.item)})", node.min, node.max)
        raise ValueError(f"unsupported anchor {node.kind!r} inside the pattern at {self.where}")


def encoded_chars(ranges) -> str:
    """The JSON string text of one character from ``ranges``, in json.dumps's forms (ensure_ascii either way).

    ``encoded_chars(((0x41, 0x41), (0xE9, 0xE9)))`` -> ``(?:[Aé]|\\\\u00e9)``.
    """
    raw = regex_syntax.subtract(ranges, ((0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)))
    escaped = regex_syntax.subtract(ranges, regex_syntax.complement(((0, 0x1F), (0x22, 0x22), (0x5C, 0x5C))))
    parts = [char_class(raw)] if raw else []
    parts += [regex_escape(json.dumps(chr(code))[1:-1]) for lo, hi in escaped for code in range(lo, hi + 1)]
    # ensure_ascii=True writes U+007F and beyond as \uXXXX (a surrogate pair above U+FFFF), lowercase.
    high = regex_syntax.subtract(ranges, ((0, 0x7E), (0xD800, 0xDFFF)))
    for lo, hi in high:
        for a, b in _split(lo, hi, 0xFFFF):
            if b <= 0xFFFF:
                parts.append(r"\\u" + digit_range(f"{a:04x}", f"{b:04x}", HEX_LOWER))
            else:
                parts += _astral_escapes(a, b)
    return group(parts)


def _split(lo: int, hi: int, at: int) -> list[tuple[int, int]]:
    return [(lo, hi)] if hi <= at or lo > at else [(lo, at), (at + 1, hi)]


def _astral_escapes(lo: int, hi: int) -> list[str]:
    """Surrogate-pair escapes (lowercase, as json.dumps writes them) of code points lo..hi above U+FFFF."""
    def pair(high: int, low_from: int, low_to: int) -> str:
        return rf"\\u{high:04x}\\u" + digit_range(f"{low_from:04x}", f"{low_to:04x}", HEX_LOWER)

    first_high, first_low = divmod(lo - 0x10000, 0x400)
    last_high, last_low = divmod(hi - 0x10000, 0x400)
    if first_high == last_high:
        return [pair(0xD800 + first_high, 0xDC00 + first_low, 0xDC00 + last_low)]
    parts = [pair(0xD800 + first_high, 0xDC00 + first_low, 0xDFFF),
             pair(0xD800 + last_high, 0xDC00, 0xDC00 + last_low)]
    if first_high + 1 < last_high:  # whole high surrogates in between take any low surrogate
        parts.append(r"\\u" + digit_range(f"{0xD801 + first_high:04x}", f"{0xD7FF + last_high:04x}", HEX_LOWER)
                     + r"\\ud[c-f][0-9a-f]{2}")
    return parts
