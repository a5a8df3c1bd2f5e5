"""impl.structured: JSON Schema to regex, the regex automaton, the token mask and tool-call patterns.

Truth comes from oracles: ``jsonschema`` says which instances are valid, Python's ``re`` and the
``regex`` package say what a pattern matches, ``json.loads`` reads generated text back.
"""
from __future__ import annotations

import codecs
import copy
import json
import random
import re
from pathlib import Path

import jsonschema
import pytest
import regex

from tests.families import NEEDS_MODELS, SHARED, family_path
from textbound import impl
from textbound.bench.schemas import suite_violations
from textbound.oracles.structured_oracles import dumps_forms
from textbound.impl import Constraint, Tokenizer, json_schema_to_regex, regex_escape, tool_call_pattern
from textbound.impl.structured import REF_DEPTH
from textbound.impl.structured import regex_syntax
from textbound.impl.structured.automaton import DEAD, ByteDFA, is_empty_language
from textbound.properties import regex_samples
from textbound.properties import schemas as instance_strategies

WEATHER = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "minLength": 1},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "detailed": {"type": "boolean"},
        "options": {"type": "object", "properties": {
            "lang": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
            "limit": {"type": ["integer", "null"]}}, "required": ["lang"]},
    },
    "required": ["location", "unit"],
}
TREE = {
    "$defs": {"node": {"type": "object", "properties": {
        "label": {"type": "string", "maxLength": 3},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
        "required": ["label"], "additionalProperties": False}},
    "$ref": "#/$defs/node",
}
MIXED = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "when": {"type": "string", "format": "date"},
        "amount": {"type": "number", "minimum": 0.01, "maximum": 1000},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b\"", "é", "😀"]}, "minItems": 1,
                 "maxItems": 3},
        "target": {"anyOf": [{"type": "string", "format": "email"}, {"type": "integer", "exclusiveMinimum": -3}]},
        "note": {"type": "string", "maxLength": 12},
    },
    "required": ["amount"],
    "additionalProperties": False,
}
VALID = {
    "weather": (WEATHER, [
        {"location": "Paris", "unit": "celsius"},
        {"location": "Zürich \"old\"\n\t\\ 😀", "unit": "fahrenheit", "days": 14, "detailed": False,
         "options": {"lang": "en-US", "limit": None}},
        {"location": "\u007f\u2028", "unit": "celsius", "days": 1, "options": {"lang": "de", "limit": -7}},
    ]),
    "tree": (TREE, [
        {"label": ""},
        {"label": "a", "children": [{"label": "bé", "children": []}, {"label": "c", "children": [{"label": "d"}]}]},
    ]),
    "mixed": (MIXED, [
        {"amount": 0.01},
        {"id": "123e4567-e89b-12d3-a456-426614174000", "when": "2024-02-29", "amount": 1000, "tags": ["é", "😀", "b\""],
         "target": "x.y@example.org", "note": "12 chars 😀é."},
        {"amount": 999.9999, "tags": ["a"], "target": -2},
        {"amount": 1e-2, "target": 0},
    ]),
}
INVALID = {
    "weather": [{"location": "", "unit": "celsius"}, {"location": "x"}, {"location": "x", "unit": "kelvin"},
                {"location": "x", "unit": "celsius", "days": 0}, {"location": "x", "unit": "celsius", "days": 15},
                {"location": "x", "unit": "celsius", "days": 2.5},
                {"location": "x", "unit": "celsius", "options": {"lang": "EN"}},
                {"location": "x", "unit": "celsius", "options": {}}],
    "tree": [{"label": "abcd"}, {"label": "a", "children": [{"label": "b"}] * 3}, {}],
    "mixed": [{"amount": 0}, {"amount": 0.009}, {"amount": 1000.5}, {"amount": -1}, {"amount": 5, "tags": []},
              {"amount": 5, "tags": ["c"]}, {"amount": 5, "target": -3}, {"amount": 5, "note": "x" * 13},
              {"amount": 5, "when": "2024-13-01"}],
}
STYLES = [dict(ensure_ascii=ascii, separators=separators)
          for ascii in (True, False) for separators in ((",", ":"), (", ", ": "))]


def validator(schema) -> jsonschema.Validator:
    """jsonschema's 2020-12 validator, checking formats too (the pattern writes only valid dates)."""
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def draft_validator(schema) -> jsonschema.Validator:
    """jsonschema's validator of the draft ``schema`` names in ``$schema`` (2020-12 when none), formats checked."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def matches(pattern: str, text: str) -> tuple[bool, bool, bool]:
    """What ``re``, ``regex`` and impl's byte automaton say about ``text`` in full."""
    return (bool(re.fullmatch(pattern, text)), bool(regex.fullmatch(pattern, text)),
            ByteDFA.from_pattern(pattern).fullmatch(text.encode("utf-8")))


@pytest.mark.parametrize("name", sorted(VALID))
def test_the_pattern_admits_every_style_of_valid_instances_and_rejects_invalid_ones(name):
    schema, instances = VALID[name]
    pattern = json_schema_to_regex(schema)
    for instance in instances:
        assert validator(schema).is_valid(instance), instance
        for style in STYLES:
            assert matches(pattern, json.dumps(instance, **style)) == (True, True, True), (instance, style)
    for instance in INVALID[name]:
        assert not validator(schema).is_valid(instance), instance
        for style in STYLES:
            assert matches(pattern, json.dumps(instance, **style)) == (False, False, False), (instance, style)


@pytest.mark.parametrize("year", [0, 1, 445, 1368, 1900, 2000, 2023, 2024, 2100, 9999])
def test_the_date_format_admits_exactly_the_dates_jsonschema_checks(year):
    pattern = json_schema_to_regex({"type": "string", "format": "date"})
    check = validator({"type": "string", "format": "date"})
    for month in range(0, 14):
        for day in range(0, 33):
            text = f"{year:04d}-{month:02d}-{day:02d}"
            assert bool(re.fullmatch(pattern, json.dumps(text))) == check.is_valid(text), text


def test_a_recursive_ref_unfolds_ref_depth_times_and_instance_strategies_stay_within():
    def tree(levels: int) -> dict:
        return {"label": "a", **({"children": [tree(levels - 1)]} if levels > 1 else {})}
    pattern = json_schema_to_regex(TREE)
    assert matches(pattern, json.dumps(tree(REF_DEPTH))) == (True, True, True)
    assert matches(pattern, json.dumps(tree(REF_DEPTH + 1))) == (False, False, False)
    assert validator(TREE).is_valid(tree(REF_DEPTH + 1))  # a policy: JSON Schema itself has no bound
    assert instance_strategies.REF_DEPTH <= REF_DEPTH


def test_whitespace_policy():
    instance = {"location": "x", "unit": "celsius", "options": {"lang": "de"}}
    default = json_schema_to_regex(WEATHER)
    loose = json_schema_to_regex(WEATHER, whitespace=r"[ \n]*")
    indented = json.dumps(instance, indent=2)
    assert not re.fullmatch(default, indented)
    assert re.fullmatch(loose, indented) and ByteDFA.from_pattern(loose).fullmatch(indented.encode())


@pytest.mark.parametrize("schema, keyword, path", [
    ({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 3}}}, "multipleOf", "$.properties.a"),
    ({"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}}, "contains", "$"),
    ({"type": "object", "properties": {"a": {"type": "object", "unevaluatedProperties": {}}}},
     "unevaluatedProperties",
     "$.properties.a"),
    ({"type": "string", "format": "color"}, "color", "$.format"),
    ({"type": "string", "pattern": "(?=a)b"}, "lookahead", "$.pattern"),
    ({"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}]}, "pattern", "$"),
    ({"not": {"minimum": 3}}, "not", "$.not"),
])
def test_an_unsupported_keyword_raises_naming_it_and_its_path(schema, keyword, path):
    with pytest.raises(ValueError) as raised:
        json_schema_to_regex(schema)
    assert keyword in str(raised.value) and path in str(raised.value)


ANNOTATED = {"id": "http://example.com/s", "$id": "s", "$schema": "http://json-schema.org/draft-04/schema#",
             "title": "t", "description": "d", "examples": [{"a": 2}], "$comment": "c", "deprecated": True,
             "readOnly": True, "writeOnly": False, "default": {"a": 1}, "markdownDescription": "m",
             "contentMediaType": "application/json", "x-vendor": {"type": "string"}}


@pytest.mark.parametrize("annotation", sorted(ANNOTATED))
def test_an_annotation_of_any_draft_is_ignored_and_still_constrains_nothing(annotation):
    schema = {"type": "object", "properties": {"a": {"type": "integer", "maximum": 3}}, "required": ["a"]}
    annotated = dict(schema, **{annotation: ANNOTATED[annotation]})
    annotated["properties"] = {"a": dict(schema["properties"]["a"], **{annotation: ANNOTATED[annotation]})}
    pattern = json_schema_to_regex(annotated)
    assert pattern == json_schema_to_regex(schema)
    validator = jsonschema.validators.validator_for(annotated, default=jsonschema.Draft202012Validator)(annotated)
    for value in (-1, 3, 4, "x"):
        text = json.dumps({"a": value})
        assert bool(re.fullmatch(pattern, text)) == validator.is_valid({"a": value}), text


DISCRIMINATED = {"oneOf": [
    {"type": "object", "properties": {"kind": {"const": "a"}, "n": {"type": "integer"}}, "required": ["kind"]},
    {"type": "object", "properties": {"kind": {"enum": ["b", "c"]}, "n": {"type": "string"}}, "required": ["kind"]},
    {"$ref": "#/$defs/other"}], "$defs": {"other": {"type": "string"}}}


def test_one_of_with_exclusive_branches_admits_exactly_the_instances_of_one_branch():
    pattern = json_schema_to_regex(DISCRIMINATED)
    validator = jsonschema.Draft202012Validator(DISCRIMINATED)
    for instance in ({"kind": "a", "n": 1}, {"kind": "b", "n": "x"}, {"kind": "a", "n": "x"}, "s", 3):
        assert bool(re.fullmatch(pattern, json.dumps(instance))) == validator.is_valid(instance), instance


@pytest.mark.parametrize("branches", [
    [{"type": "integer"}, {"minimum": 2}],  # 2 is an instance of both
    [{"maxLength": 3}, {"minLength": 2}],  # "ab" is an instance of both
    [{"type": "string"}, {"maxLength": 3}],  # no type declared: "ab" is an instance of both
])
def test_one_of_whose_branches_may_overlap_is_refused_rather_than_read_as_any_of(branches):
    with pytest.raises(ValueError, match=r"'oneOf' at \$: branches 0 and 1 may both match"):
        json_schema_to_regex({"oneOf": branches})


def test_a_remote_ref_is_refused_naming_the_url():
    with pytest.raises(ValueError, match="https://example.com/other.json"):
        json_schema_to_regex({"type": "object", "properties": {"a": {"$ref": "https://example.com/other.json"}}})


@pytest.mark.parametrize("name", sorted(VALID))
def test_the_schema_is_not_mutated(name):
    schema = VALID[name][0]
    before = copy.deepcopy(schema)
    json_schema_to_regex(schema)
    assert schema == before


@pytest.mark.parametrize("text", ["a.b", "[x]-(y)|z{1,2}?*+^$\\", "<tool_call>\n\t", "é😀 #&~"])
def test_regex_escape_matches_exactly_the_text(text):
    pattern = regex_escape(text)
    assert matches(pattern, text) == (True, True, True)
    assert matches(pattern, text + "x") == (False, False, False)


PATTERNS = [r"a[0-9]{2,3}b?", r"(?:ab|c)*d+", r"[^\s,]{1,12}", r"\d\w\s\D\W\S", r"x.y", r"[é-ü😀]+|[\x00-\x1f]",
            r"(?P<g>[a-c]){9,11}", r"[\]\-^]*", r"(a|)\{\}"]
ALPHABET = "abcdxy,09 \t\n-]^{}é÷ü😀٣\x00\x1f"


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_byte_automaton_agrees_with_re(pattern):
    rng = random.Random(pattern)
    dfa = ByteDFA.from_pattern(pattern)
    compiled = re.compile(pattern)
    tried = 0
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        tried += bool(compiled.fullmatch(text))
        assert dfa.fullmatch(text.encode("utf-8")) == bool(compiled.fullmatch(text)), text
        # A prefix of the text stays live exactly when some continuation may still match.
        if compiled.fullmatch(text):
            assert all(dfa.walk(0, text.encode()[:cut]) != DEAD for cut in range(len(text.encode())))


@pytest.mark.parametrize("pattern, what", [("a(?=b)", "lookahead"), (r"(a)\1", "backreference"), ("(?i)a", "flags"),
                                           (r"\bx", "word boundary"), ("a++", "possessive"), ("^a", "anchor")])
def test_an_unsupported_regex_construct_raises_naming_it(pattern, what):
    with pytest.raises(ValueError, match=re.escape(what)):
        ByteDFA.from_pattern(pattern)


# -- the token mask --------------------------------------------------------------------------------

BOUNDED = {  # finite languages: masked decoding ends on its own
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 6},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "°K 😀"]},
        "days": {"type": "integer", "minimum": -3, "maximum": 120},
        "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2},
        "where": {"type": "object", "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90},
                                                   "code": {"type": "string", "pattern": "^[A-Z]{2}$"}},
                  "required": ["code"]},
    },
    "required": ["city", "unit"],
}
BYTE_COVERING_FAMILIES = ["gpt2", "llama3", "qwen", "sentencepiece", "metaspace_never"]


def masked_decoding(constraint, vocab: list[bytes], rng: random.Random, steps: int = 400) -> bytes:
    """Text from random tokens masked by the constraint, ending (as EOS would) when complete."""
    state, text = constraint.start(), b""
    for _ in range(steps):
        allowed = constraint.allowed_tokens(state)
        if constraint.is_complete(state) and (not allowed or rng.random() < 0.3):
            return text
        assert allowed, f"no token allowed after {text!r}, and the text is not complete"
        token = rng.choice(sorted(allowed)) if len(allowed) < 5000 else rng.choice(tuple(allowed))
        state = constraint.advance(state, token)
        text += vocab[token]
    raise AssertionError(f"masked decoding did not end within {steps} tokens: {text!r}")


def assert_masked_decoding_stays_on_the_pattern(constraint, tokenizer, runs: int, seed: int = 0) -> None:
    rng, vocab = random.Random(seed), tokenizer.vocab_bytes()
    for _ in range(runs):
        text = masked_decoding(constraint, vocab, rng).decode("utf-8")
        assert re.fullmatch(constraint.pattern, text), text


@pytest.fixture(scope="module", params=BYTE_COVERING_FAMILIES)
def family_tokenizer(request):
    return Tokenizer.from_dir(family_path(request.param))


def test_masked_decoding_gives_valid_arguments(family_tokenizer):
    constraint = Constraint(json_schema_to_regex(BOUNDED), family_tokenizer)
    rng, vocab = random.Random(7), family_tokenizer.vocab_bytes()
    for _ in range(40):
        text = masked_decoding(constraint, vocab, rng).decode("utf-8")
        assert validator(BOUNDED).is_valid(json.loads(text)), text


def test_masked_decoding_of_a_tool_call_fullmatches(family_tokenizer):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": BOUNDED}},
             {"type": "function", "function": {"name": "ping"}}]
    assert_masked_decoding_stays_on_the_pattern(Constraint(tool_call_pattern(tools), family_tokenizer),
                                                family_tokenizer, runs=30)


def test_special_tokens_are_never_allowed_and_a_disallowed_token_raises(family_tokenizer):
    constraint = Constraint(r"[\s\S]{1,3}", family_tokenizer)  # any text: only specials are excluded
    special = {i for i, token in family_tokenizer.added.by_id.items() if token.special}
    vocab = family_tokenizer.vocab_bytes()
    allowed = constraint.allowed_tokens(constraint.start())
    assert special and not special & allowed
    assert allowed == {i for i, data in enumerate(vocab)
                       if i not in special and data and _is_utf8_prefix(data)}
    for token in sorted(special)[:3]:
        with pytest.raises(ValueError):
            constraint.advance(constraint.start(), token)
    digits = Constraint("[0-9]+", family_tokenizer)
    letter = next(i for i, data in enumerate(vocab) if data == b"a")
    with pytest.raises(ValueError, match="not allowed"):
        digits.advance(digits.start(), letter)


def _is_utf8_prefix(data: bytes) -> bool:
    """True when ``data`` is at most 3 characters of UTF-8, the last possibly cut (a token may end mid-character)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return len(text) + bool(decoder.getstate()[0]) <= 3


def test_states_are_shared_values(family_tokenizer):
    constraint = Constraint(json_schema_to_regex(BOUNDED), family_tokenizer)
    brace = next(i for i, data in enumerate(family_tokenizer.vocab_bytes()) if data == b"{")
    first, second = constraint.advance(constraint.start(), brace), constraint.advance(constraint.start(), brace)
    assert first == second and hash(first) == hash(second) and not constraint.is_complete(first)


def test_a_pattern_it_cannot_compile_raises(family_tokenizer):
    for pattern in ["a(?!b)", "[^\\s\\S]", "(unclosed"]:
        with pytest.raises(ValueError):
            Constraint(pattern, family_tokenizer)


class _LastByteUnchecked(Constraint):
    """Broken on purpose: a token is allowed when its first byte keeps the text live."""

    def _compute_mask(self, state):
        first = 0
        for target, classes in self._targets_of(state):
            first |= self._class_mask(0, classes)
        return first


def test_the_decoding_check_catches_a_mask_that_skips_checks(family_tokenizer):
    broken = _LastByteUnchecked(tool_call_pattern(
        [{"type": "function", "function": {"name": "get_weather", "parameters": BOUNDED}}]), family_tokenizer)
    with pytest.raises((AssertionError, ValueError)):
        assert_masked_decoding_stays_on_the_pattern(broken, family_tokenizer, runs=30)


@NEEDS_MODELS
def test_masked_decoding_on_qwen3():
    if "qwen3" not in SHARED:
        pytest.skip("no qwen3 folder in $TEXTBOUND_MODELS")
    tokenizer = Tokenizer.from_dir(SHARED["qwen3"])
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": BOUNDED}}]
    constraint = Constraint(tool_call_pattern(tools, name="get_weather"), tokenizer)
    assert_masked_decoding_stays_on_the_pattern(constraint, tokenizer, runs=20)
    assert not {tokenizer.eos_token_id} & constraint.allowed_tokens(constraint.start())


@pytest.mark.parametrize("family, reason", [("word_suffix", "rewrites text between tokens"),
                                            ("wordpiece", "no token of the vocabulary can spell"),
                                            ("unigram", re.escape("no token of the vocabulary can spell '\\n{"))])
def test_a_vocabulary_a_mask_cannot_follow_is_refused_saying_why(family, reason):
    tokenizer = Tokenizer.from_dir(family_path(family))
    with pytest.raises(ValueError, match=reason):
        Constraint(tool_call_pattern(TOOLS, name="ping"), tokenizer)


def test_a_special_token_spelling_the_start_of_every_match_is_allowed_there_only():
    from textbound.families import build_mistral_family
    tokenizer = Tokenizer.from_dir(build_mistral_family("mistral-v3"))
    tool_calls = next(i for i, token in tokenizer.added.by_id.items() if token.content == "[TOOL_CALLS]")
    constraint = Constraint(tool_call_pattern(TOOLS, name="ping", format="mistral"), tokenizer)
    assert tool_calls in constraint.allowed_tokens(constraint.start())
    state = constraint.advance(constraint.start(), tool_calls)
    assert tool_calls not in constraint.allowed_tokens(state) and not constraint.is_complete(state)
    hermes = Constraint(tool_call_pattern(TOOLS, name="ping"), tokenizer)
    assert tool_calls not in hermes.allowed_tokens(hermes.start())
    rng = random.Random(3)
    for _ in range(5):
        state, ids = constraint.start(), []
        while not constraint.is_complete(state):
            ids.append(rng.choice(sorted(constraint.allowed_tokens(state))))
            state = constraint.advance(state, ids[-1])
        assert re.fullmatch(constraint.pattern, tokenizer.decode(ids)), tokenizer.decode(ids)


# -- tool-call patterns --------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]
CALL_TEXT = {
    "hermes": '<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>',
    "llama3_json": '{{"name": "{name}", "parameters": {arguments}}}',
    "mistral": '[TOOL_CALLS][{{"name": "{name}", "arguments": {arguments}}}]',
}


@pytest.mark.parametrize("format", sorted(CALL_TEXT))
def test_tool_call_pattern_admits_the_call_of_each_tool(format):
    pattern = tool_call_pattern(TOOLS, format=format)
    for name, arguments in [("get_weather", {"location": "x", "unit": "celsius"}), ("ping", {})]:
        text = CALL_TEXT[format].format(name=name, arguments=json.dumps(arguments))
        assert matches(pattern, text) == (True, True, True), text
    wrong = CALL_TEXT[format].format(name="ping", arguments=json.dumps({"location": "x", "unit": "celsius"}))
    assert matches(pattern, wrong) == (False, False, False)
    forced = tool_call_pattern(TOOLS, name="ping", format=format)
    assert not re.fullmatch(forced, CALL_TEXT[format].format(name="get_weather", arguments='{"location": "x", '
                                                                                           '"unit": "celsius"}'))


def test_an_unknown_tool_name_or_format_raises():
    with pytest.raises(ValueError, match="get_weather.*ping"):
        tool_call_pattern(TOOLS, name="nope")
    with pytest.raises(ValueError, match="hermes"):
        tool_call_pattern(TOOLS, format="nope")


# -- real-world schemas: keywords combined, a sound subset written -------------------------------------

COMBINED = {  # name: (schema, an instance the pattern must admit, in json.dumps's compact form)
    "draft-04 exclusive bounds": ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer",
                                   "minimum": 0, "exclusiveMinimum": True, "maximum": 9, "exclusiveMaximum": True}, 1),
    "number exclusive bounds": ({"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 2}, 1.5),
    "pattern properties beside properties": ({"type": "object", "properties": {"xa": {"type": "integer"}, "b": {}},
                                              "patternProperties": {"^x": {"minimum": 3}}, "required": ["xa"],
                                              "additionalProperties": False}, {"xa": 3}),
    "pattern properties alone": ({"type": "object", "patternProperties": {"^[a-z]+$": {"type": "boolean"}},
                                  "additionalProperties": False}, {"ok": True}),
    "required names undeclared": ({"type": "object", "required": ["a", "b"], "additionalProperties": {"type": "null"}},
                                  {"a": None, "b": None}),
    "unique enum items": ({"type": "array", "items": {"enum": ["a", "b", 1, 1.0]}, "uniqueItems": True,
                           "minItems": 1}, ["a", 1]),
    "unique items": ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, [7]),
    "formats": ({"type": "object", "properties": {f: {"type": "string", "format": f} for f in (
        "uri", "uri-reference", "iri", "hostname", "ipv4", "ipv6", "regex", "json-pointer", "duration", "date-time",
        "int32")}}, {"uri": "https://a.example/x"}),
    "type beside oneOf": ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                           "oneOf": [{"required": ["a"], "properties": {"b": False}}, {"required": ["b"],
                                                                                       "properties": {"a": False}}]},
                          {"a": "x"}),
    "keywords beside $ref": ({"$defs": {"s": {"type": ["string", "null"]}}, "$ref": "#/$defs/s", "maxLength": 2,
                              "type": "string"}, "ab"),
    "allOf of objects": ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}},
                                     "required": ["a"]},
                                    {"properties": {"a": {"maximum": 5}, "b": {"type": "string"}},
                                     "additionalProperties": False}]}, {"a": 5, "b": "x"}),
    "if then else": ({"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "n": {}},
                      "required": ["n"],
                      "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                      "then": {"properties": {"n": {"type": "integer"}}},
                      "else": {"properties": {"n": {"type": "string"}}}}, {"kind": "a", "n": 1}),
    "not": ({"type": "object", "properties": {"a": {}, "b": {}}, "not": {"required": ["a"]}}, {"b": 1}),
    "const and enum of objects": ({"enum": [{"a": [1, {"b": None}]}, {}]}, {"a": [1, {"b": None}]}),
    "boolean schemas": ({"type": "object", "properties": {"a": True, "b": False}}, {"a": [1]}),
    "property counts": ({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1,
                         "maxProperties": 2}, {"k": 1}),
    "property names": ({"type": "object", "properties": {"ab": {}, "abc": {}}, "propertyNames": {"maxLength": 2}},
                       {"ab": 1}),
    "oneOf made exclusive by negation": ({"type": "object", "properties": {"src": {"type": "string"}, "handle": {}},
                                          "oneOf": [{"required": ["src"]}, {"required": ["handle"]}]}, {"src": "x"}),
    # SchemaStore's Qualisys PAF schema: `required` holds for every non-object, so its negation is objects only
    "oneOf of requireds beside other types": ({"anyOf": [{"type": "string"}, {"type": "object"}],
                                               "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}),
    "oneOf of an enum and a type": ({"oneOf": [{"enum": [False, "auto"]}, {"type": "string"}]}, False),
    "dependencies": ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}, "c": {}},
                      "required": ["a"], "dependencies": {"a": ["b"], "c": {"required": ["a"]}},
                      "dependentRequired": {"b": ["c"]}}, {"a": 1, "b": 2, "c": 3}),
    "property counts beside optional properties": ({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
                                                    "minProperties": 1, "maxProperties": 2}, {"a": 1}),
    "enums intersected": ({"allOf": [{"enum": ["a", 1, True]}, {"enum": [1.0, True, "b"]}]}, True),
    "keywords of another type": ({"type": "string", "minimum": 3, "uniqueItems": True, "required": ["x"]}, "s"),
    # oneOf proved exclusive from over-approximations (impl/structured/disjoint.py), or made so by a negation
    "oneOf of a referenced enum and an array": ({"oneOf": [{"$ref": "#/$defs/e"}, {"type": "array", "items": {
        "$ref": "#/$defs/e"}}], "$defs": {"e": {"anyOf": [{"enum": ["a", "b"]}, {"const": 3}]}}}, ["a", 3]),
    "oneOf of a pattern and an enum": ({"oneOf": [{"type": "string", "pattern": "^[0-9.]+$"},
                                                  {"enum": ["alpha", "beta", "1.2"]}]}, "beta"),
    "oneOf of consts behind allOf": ({"type": "object", "oneOf": [
        {"required": ["v"], "properties": {"v": {"allOf": [{"const": "1"}, {"type": "string"}]}, "w": {}}},
        {"required": ["v"], "properties": {"v": {"allOf": [{"$ref": "#/$defs/two"}]}}}],
        "$defs": {"two": {"const": "2"}}}, {"v": "1", "w": 0}),
    # SchemaStore's Airplane task: each branch an allOf of a shared base and a required property
    "oneOf of allOf-wrapped requireds": ({"type": "object", "additionalProperties": False, "properties": {
        "node": {"type": "object"}, "python": {"type": "object"}}, "oneOf": [
        {"allOf": [{"$ref": "#/$defs/base"}, {"required": ["node"]}]},
        {"allOf": [{"$ref": "#/$defs/base"}, {"required": ["python"]}]}], "$defs": {"base": {"type": "object"}}},
        {"python": {}}),
    # SchemaStore's .swcrc: the branches differ in an optional property's values, so {} matches both
    "oneOf told apart by an optional property's values": ({"type": "object", "oneOf": [
        {"type": "object", "properties": {"syntax": {"enum": ["ecmascript"]}, "jsx": {"type": "boolean"}}},
        {"type": "object", "properties": {"syntax": {"enum": ["typescript"]}, "tsx": {"type": "boolean"}}}]},
        {"syntax": "typescript", "tsx": True}),
    # SchemaStore's Azure Functions bindings: a string is valid for both (object keywords hold for it),
    # no object is ("type" listed by a not-enum in one, an enum in the other)
    "oneOf of objects, exclusive on objects only": ({"oneOf": [
        {"required": ["type"], "properties": {"type": {"not": {"enum": ["a", "b"]}}}},
        {"required": ["type"], "properties": {"type": {"enum": ["a"]}}}]}, {"type": "a"}),
    # SchemaStore's CircleCI config: a branch excluded by the negation of an anyOf
    "oneOf against an anyOf": ({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "oneOf": [
        {"required": ["a"]}, {"anyOf": [{"required": ["b"]}, {"required": ["c"]}]}]}, {"a": 1}),
    # SchemaStore's rust-toolchain: path xor channel, "not path" written as a not of path being a string
    "oneOf of a not and a required": ({"type": "object", "properties": {"path": {"type": "string"}, "c": {}},
                                       "oneOf": [{"not": {"properties": {"path": {"type": "string"}},
                                                          "required": ["path"]}}, {"required": ["path"]}]},
                                      {"c": 1}),
    # draft 7 ignores the keywords beside $ref: branch 0 is any value, so a string matches both
    "oneOf beside $ref under draft 7": ({"$schema": "http://json-schema.org/draft-07/schema#", "oneOf": [
        {"$ref": "#/definitions/any", "type": "integer"}, {"type": "string"}], "definitions": {"any": {}}}, 3),
    "string checks beside an enum": ({"type": "string", "enum": ["", "ab", "abc", "a1"], "minLength": 1,
                                      "maxLength": 2, "pattern": "^[a-z]+$"}, "ab"),
    "pattern beside lengths": ({"type": "string", "pattern": "^[a-z]{2,3}$", "minLength": 1, "maxLength": 4}, "abc"),
}


@pytest.mark.parametrize("name", sorted(COMBINED))
def test_every_sampled_match_of_a_combined_schema_is_valid_and_an_instance_matches(name):
    schema, instance = COMBINED[name]
    pattern = json_schema_to_regex(schema)
    check = draft_validator(schema)
    assert re.fullmatch(pattern, json.dumps(instance, separators=(",", ":"))), "the pattern admits no instance"
    for text in regex_samples.sample_matches(pattern, random.Random(name), 300):
        assert re.fullmatch(pattern, text), text
        assert check.is_valid(json.loads(text)), (text, [e.message for e in check.iter_errors(json.loads(text))])


def test_the_sampler_draws_full_matches_of_both_branches():
    drawn = set(regex_samples.sample_matches("a[0-9]|b[^\\s\\S]|c", random.Random(0), 50))
    assert all(re.fullmatch("a[0-9]|c", text) for text in drawn) and "c" in drawn and len(drawn) > 2


SUITE = Path(__file__).resolve().parent.parent / "corpora" / "json_schema_test_suite"
# draft: (schemas impl compiles at least, schemas in the draft's folder with optional/ and optional/format/)
SUITE_DRAFTS = {"draft4": (148, 199), "draft6": (201, 276), "draft7": (236, 321), "draft2019-09": (256, 448),
                "draft2020-12": (258, 461)}


@pytest.mark.parametrize("draft", sorted(SUITE_DRAFTS))
def test_no_instance_the_json_schema_test_suite_calls_invalid_matches_in_any_draft(draft):
    compiled, total, violations = suite_violations(impl, SUITE / draft)
    assert violations == []
    assert (compiled >= SUITE_DRAFTS[draft][0], total) == (True, SUITE_DRAFTS[draft][1])


def test_the_suite_catches_one_of_read_as_any_of():
    import textbound.mutants.structured_one_of_as_any_of as one_of_as_any_of
    _, _, admitted = suite_violations(one_of_as_any_of, SUITE / "draft4")
    assert any(line.startswith("oneOf.json") for line in admitted)


# Each of these admitted an instance jsonschema rejects before impl read them as the drafts do.
UNSOUND_BEFORE = {
    # ECMA-262's \d is [0-9]; Python's also takes a Bengali four: both readings must accept what impl writes
    "ECMA-262 and Python classes": ({"type": "string", "pattern": "^\\d$"}, "\u09ea"),
    # a property name that may match a pattern under either reading takes that pattern's schema (U+FEFF is
    # whitespace to ECMA-262, not to Python)
    "ECMA-262 patternProperties": ({"type": "object", "properties": {"\ufeff": {}},
                                    "patternProperties": {"^\\s$": {"type": "integer"}}}, {"\ufeff": "x"}),
    # draft 4: 1.0 is no integer
    "an integral float in an integer enum": ({"$schema": "http://json-schema.org/draft-04/schema#",
                                              "type": "integer", "enum": [1.0]}, 1.0),
    # "#foo" is an anchor, not the document root
    "a plain-name fragment": ({"type": "object", "properties": {"x": {"$ref": "#foo"}},
                               "$defs": {"a": {"$anchor": "foo", "type": "integer"}}}, {"x": {}}),
    # inside an embedded resource "#" is that resource (its own $defs/i, an integer)
    "a $ref in an embedded resource": ({"type": "object", "$defs": {"i": {"type": "string"}}, "properties": {
        "x": {"$id": "http://example.com/x.json", "$ref": "#/$defs/i", "$defs": {"i": {"type": "integer"}}}}},
        {"x": "s"}),
    # draft 4 has no const: both branches are any object with k, and {"k": 1} matches both
    "const proves nothing under draft 4": ({"$schema": "http://json-schema.org/draft-04/schema#", "oneOf": [
        {"type": "object", "required": ["k"], "properties": {"k": {"const": 1}}},
        {"type": "object", "required": ["k"], "properties": {"k": {"const": 2}}}]}, {"k": 1}),
    # draft 7 ignores the keywords beside $ref: "x" matches both branches
    "keywords beside $ref prove nothing under draft 7": ({"$schema": "http://json-schema.org/draft-07/schema#",
                                                          "oneOf": [{"$ref": "#/definitions/any", "type": "integer"},
                                                                    {"type": "string"}],
                                                          "definitions": {"any": {}}}, "x"),
    # {"path": 1} is valid for both branches: path is no string, so "not" holds, and it is present
    "a not proves nothing where the property may have another type": ({"type": "object", "oneOf": [
        {"not": {"properties": {"path": {"type": "string"}}, "required": ["path"]}}, {"required": ["path"]}]},
        {"path": 1}),
    # (the suite's truth: jsonschema checks json-pointer only with the jsonpointer package)
    "json-pointer escapes, as the suite has them": ({"type": "string", "format": "json-pointer"}, "/a~b"),
}
_JSONSCHEMA_SILENT = ("ECMA-262", "as the suite has them")  # cases whose truth jsonschema does not tell


@pytest.mark.parametrize("name", sorted(UNSOUND_BEFORE))
def test_an_instance_some_reading_rejects_is_not_admitted(name):
    schema, invalid = UNSOUND_BEFORE[name]
    check = draft_validator(schema)
    assert any(word in name for word in _JSONSCHEMA_SILENT) or not check.is_valid(invalid)
    try:
        pattern = json_schema_to_regex(schema)
    except ValueError as exc:
        assert "\n" not in str(exc) and " at $" in str(exc)
        return
    assert not any(re.fullmatch(pattern, text) for text in dumps_forms(invalid))
    if is_empty_language(regex_syntax.parse(pattern)):
        return  # it admits nothing: sound
    for text in regex_samples.sample_matches(pattern, random.Random(name), 50):
        assert check.is_valid(json.loads(text)), text


def test_a_pattern_class_reads_as_both_ecma_262_and_python_and_a_negated_class_stays_a_subset():
    from textbound.impl.structured.regex_syntax import INNER, OUTER, class_escape, parse
    assert class_escape("d", INNER) == ((48, 57),) and (0x9EA, 0x9EA) not in class_escape("D", INNER)
    assert parse("[^\\d]", INNER) == parse("\\D", INNER) and parse("[^\\d]", OUTER) == parse("\\D", OUTER)
    assert parse("\\d", "python") != parse("\\d", INNER)
    for escape in ("\\a", "\\U0001F600", "a{,3}"):
        with pytest.raises(ValueError, match="ECMA-262"):
            parse(escape, INNER)


# Keywords of drafts 4 to 2020-12 that assert nothing about an instance: identifiers, containers of
# definitions, annotations. Every other keyword of a draft's metaschema must be written or refused.
NON_ASSERTIONS = {"$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary",
                  "$comment", "$defs", "definitions", "title", "description", "default", "examples",
                  "deprecated", "readOnly", "writeOnly", "contentSchema"}


def test_every_keyword_of_drafts_4_to_2020_12_is_written_or_refused():
    from jsonschema_specifications import REGISTRY

    from textbound.impl.structured import schema as translator
    keywords = set()
    for uri in REGISTRY:
        if "draft-03" not in uri and "draft3" not in uri:
            keywords |= set(REGISTRY.contents(uri).get("properties", {}))
    assert len(keywords) > 60
    assert keywords - NON_ASSERTIONS <= translator._TRANSLATED | translator._UNTRANSLATED
    refused = {"multipleOf", "contains", "prefixItems", "additionalItems", "unevaluatedProperties", "$dynamicRef"}
    for keyword in refused:
        with pytest.raises(ValueError, match=re.escape(repr(keyword))):
            json_schema_to_regex({keyword: {"type": "integer"} if keyword != "multipleOf" else 2})
