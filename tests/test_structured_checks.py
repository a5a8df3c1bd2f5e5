"""The structured checks fire on broken implementations (tests/broken_structured_impl.py), the
corpus is what its README says, and the oracles' helpers answer as documented."""
from __future__ import annotations

import json
import random

import jsonschema
import pytest

from tests import broken_structured_impl
from tests.families import family_path, implementation
from textbound.checks import Subject, run_check
from textbound.checks.structured import viable
from textbound.checks.structured_cases import UNSUPPORTED, _unsupported_variant
from textbound.naming.divergence import Case
from textbound.oracles.structured_oracles import broken_keyword, byte_vocabulary, dumps_forms, mask_ids, schema_errors
from textbound.plan.implementation import Implementation
from textbound.properties.schemas import draw_examples, in_key_policy, instances, schemas, tool_corpus, tool_schemas

# Keywords the corpus may use: impl's supported subset and the annotation "description".
CORPUS_KEYWORDS = {"type", "enum", "const", "properties", "required", "items", "minItems", "maxItems", "minLength",
                   "maxLength", "pattern", "minimum", "maximum", "anyOf", "oneOf", "$ref", "$defs",
                   "additionalProperties", "format", "description"}
BOUNDED = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9},
                                            "note": {"type": "string", "maxLength": 3}}, "required": ["n"]}
FAMILY = "gpt2"  # byte level: every byte has a token, the extra one included


def _keywords(schema, inside_properties=False):
    if isinstance(schema, dict):
        for key, value in schema.items():
            if not inside_properties:
                yield key
            yield from _keywords(value, key in ("properties", "$defs") and not inside_properties)
    elif isinstance(schema, list):
        for item in schema:
            yield from _keywords(item)


def test_corpus_has_fifty_valid_tools_with_unique_names_in_the_supported_subset():
    tools = tool_schemas()
    assert len(tools) >= 50
    names = [tool["function"]["name"] for tool in tools.values()]
    assert len(names) == len(set(names))
    for name, tool in tools.items():
        parameters = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert set(_keywords(parameters)) <= CORPUS_KEYWORDS, name


def test_generated_schemas_are_valid_and_their_instances_follow_them():
    for schema in draw_examples(schemas(), 6, 3):
        jsonschema.Draft202012Validator.check_schema(schema)
        for instance in draw_examples(instances(schema), 3, 4):
            assert schema_errors(schema, instance) == []
            assert in_key_policy(schema, instance)


def test_oracle_helpers():
    assert mask_ids(bytes([0b101, 0b10000000])) == {0, 2, 15}
    assert len(set(dumps_forms({"a": ["é"]}))) == 4
    pattern = r'\{"a": "[^"]*"\}'
    assert viable(pattern, b'{"a": "') is True
    assert viable(pattern, b'{"b') is False
    assert viable(pattern, '{"a": "é'.encode()[:-1]) is True  # cut inside é: some character may follow
    assert len(byte_vocabulary().text_ids) == 256


def _impl_writes_structured() -> None:
    try:
        implementation().json_schema_to_regex({"type": "boolean"})
    except NotImplementedError:
        pytest.skip("impl's structured component is not written yet (json_schema_to_regex raises NotImplementedError)")


def _broken(variant: str) -> Subject:
    _impl_writes_structured()
    module = broken_structured_impl.variant(variant)
    return Subject(FAMILY, family_path(FAMILY), Implementation(module.__name__))


def _run(subject: Subject, prop: str, **fields):
    return run_check(subject, Case("structured", prop, subject.family, {"seed": 1, "examples": 40, **fields}))


def test_sound_fires_when_minimum_is_ignored():
    found = _run(_broken("minimum_ignored"), "sound", schema=BOUNDED)
    assert found is not None and found.kind.startswith("admits an instance breaking") and "minimum" in found.kind


def test_complete_fires_when_an_optional_property_is_required():
    found = _run(_broken("optional_required"), "complete", schema=BOUNDED)
    assert found is not None and found.kind.startswith("rejects json.dumps output")
    assert "note" not in json.loads(found.case.input["text"])


def test_complete_fires_when_a_space_after_the_colon_is_rejected():
    found = _run(_broken("colon_space_rejected"), "complete", schema=BOUNDED)
    assert found is not None and found.kind.startswith("rejects json.dumps output (separators (', ', ': ')")


def test_differential_fires_on_an_instance_below_the_minimum():
    """Told as sound tells it, and recorded as a sound case: one bug, one signature, whichever check
    drew the text."""
    found = _run(_broken("minimum_ignored"), "differential", schema=BOUNDED, text='{"n": 1}')
    assert found is not None and found.signature == "structured/sound/admits an instance breaking minimum/maximum"
    assert run_check(_broken("minimum_ignored"), found.case).signature == found.signature  # it replays as found


def test_an_instance_is_told_by_the_keyword_it_breaks_bounds_by_their_pair():
    assert broken_keyword({"type": "integer", "minimum": 3}, 1) == broken_keyword(
        {"type": "integer", "maximum": 3}, 5) == "minimum/maximum"
    assert broken_keyword({"type": "string", "minLength": 2}, "a") == "minLength/maxLength"
    # a combinator's branches all breaking one keyword are told by it, not by the combinator
    assert broken_keyword({"anyOf": [{"type": "integer", "minimum": 3}, {"type": "integer", "maximum": -3}]}, 0) == \
        "minimum/maximum"
    assert broken_keyword({"type": "object", "properties": {"c": {"anyOf": [
        {"type": "object", "required": ["n"]}, {"type": "string"}]}}, "required": ["c"]}, {"c": {}}) == "required"
    assert broken_keyword({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1) == "oneOf"


def test_mask_fires_on_a_constraint_allowing_an_extra_byte():
    found = _run(_broken("extra_byte"), "mask", schema=BOUNDED, oracles=["llguidance"])
    assert found is not None and found.kind == "Constraint allows a token the pattern forbids"
    assert found.first_difference["wrong"] == "impl"


def test_mask_reports_a_constraint_failing_on_the_run_it_walks():
    """No given text matches, so the mask check walks a run decoded by impl's Constraint: its
    failure there is impl's divergence, not the harness's error."""
    found = _run(_broken("advance_refused"), "mask", schema=BOUNDED, texts=["not a match"], oracles=["llguidance"])
    assert found is not None and found.kind == "raised ValueError" and found.expected == "a decoding run"


def test_guarantee_fires_when_minimum_is_ignored():
    tools = [{"type": "function", "function": {"name": "pick", "parameters": BOUNDED}}]
    found = _run(_broken("minimum_ignored"), "guarantee", tools=tools, name="pick", format="hermes", runs=60)
    assert found is not None and found.kind == "arguments invalid for the tool"


def test_a_guarantee_finding_replays_only_along_the_constraint():
    """The recorded run replays to the same finding; ids cut from it (as delta debugging cuts them)
    are no run the Constraint makes, so they show nothing."""
    tools = [{"type": "function", "function": {"name": "pick", "parameters": BOUNDED}}]
    subject = _broken("minimum_ignored")
    found = _run(subject, "guarantee", tools=tools, name="pick", format="hermes", runs=60)
    ids = found.case.input["ids"]
    again = _run(subject, "guarantee", tools=tools, name="pick", format="hermes", ids=ids)
    assert again is not None and again.kind == found.kind
    assert _run(subject, "guarantee", tools=tools, name="pick", format="hermes", ids=ids[1:]) is None
    assert _run(subject, "guarantee", tools=tools, name="pick", format="hermes", ids=ids[:-1]) is None


def test_guarantee_fires_when_a_vocabulary_it_can_follow_is_refused():
    tools = [{"type": "function", "function": {"name": "pick", "parameters": BOUNDED}}]
    found = _run(_broken("vocabulary_refused"), "guarantee", tools=tools, name="pick", format="hermes", runs=1)
    assert found is not None and found.kind == "refuses a vocabulary the oracle decodes token by token"


@pytest.mark.parametrize("family", ["word_suffix", "unigram"])  # a rewriting decoder; no newline token
def test_a_refusal_of_a_vocabulary_the_oracle_shows_unable_is_no_divergence(family):
    _impl_writes_structured()
    tools = [{"type": "function", "function": {"name": "pick", "parameters": BOUNDED}}]
    subject = Subject(family, family_path(family), implementation())
    assert _run(subject, "guarantee", tools=tools, name="pick", format="hermes", runs=1) is None


def test_errors_fires_when_an_unknown_name_is_accepted():
    tools = tool_corpus()["travel"]
    found = _run(_broken("unknown_name_accepted"), "errors", tools=tools, name="no_such_tool")
    assert found is not None and found.kind == "accepted what it should refuse"


ONE_OF_BY_REQUIRED = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}


def _mutant(name: str) -> Subject:
    _impl_writes_structured()
    return Subject(FAMILY, family_path(FAMILY), Implementation(f"mutants.{name}"))


def test_sound_and_errors_fire_when_one_of_is_read_as_any_of():
    found = _run(_mutant("structured_one_of_as_any_of"), "sound", schema=ONE_OF_BY_REQUIRED)
    assert found is not None and "oneOf" in found.kind, found
    variant = {**BOUNDED, "oneOf": UNSUPPORTED["oneOf"]}
    found = _run(_mutant("structured_one_of_as_any_of"), "errors", schema=variant, keyword="oneOf", path=[])
    assert found is not None and found.kind == "accepted what it should refuse"
    assert _run(Subject(FAMILY, family_path(FAMILY), implementation()), "sound", schema=ONE_OF_BY_REQUIRED) is None


@pytest.mark.parametrize("keyword", sorted(UNSUPPORTED))
def test_every_keyword_the_errors_cases_add_is_refused_by_impl_naming_it_and_where(keyword):
    _impl_writes_structured()
    for seed in range(4):
        variant, named, path = _unsupported_variant(BOUNDED, random.Random(seed))
        variant, named = ({**BOUNDED, keyword: UNSUPPORTED[keyword]}, keyword) if seed == 0 else (variant, named)
        found = _run(Subject(FAMILY, family_path(FAMILY), implementation()), "errors", schema=variant, keyword=named,
                     path=[] if seed == 0 else path)
        assert found is None, found


def test_the_errors_cases_put_no_one_of_beside_an_enum_which_impl_builds_exactly():
    """A oneOf beside an enum is in impl's subset (each value tried against the branches): the errors
    cases add another keyword there, each refused (before, some seeds expected a refusal of it)."""
    _impl_writes_structured()
    with_enum = {"type": "object", "properties": {"mode": {"type": "string", "enum": ["overwrite", "append"]}},
                 "required": ["mode"]}
    for seed in range(24):
        variant, named, path = _unsupported_variant(with_enum, random.Random(seed))
        assert not (named == "oneOf" and path), seed
        found = _run(Subject(FAMILY, family_path(FAMILY), implementation()), "errors", schema=variant, keyword=named,
                     path=path)
        assert found is None, found
