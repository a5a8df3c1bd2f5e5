"""The seeded samplers the structured checks draw from (properties/instance_samples.py and
regex_samples.pattern_texts): valid, distinct, reproducible, and reaching the edges a check needs."""
from __future__ import annotations

import json
import random
import re
import sys
import types

from tests.families import family_path
from textbound import impl
from textbound.checks import Subject, run_check
from textbound.naming.divergence import Case
from textbound.oracles.structured_oracles import schema_errors
from textbound.plan.implementation import Implementation
from textbound.properties.instance_samples import sample_instances
from textbound.properties.regex_samples import pattern_texts
from textbound.properties.schemas import draw_examples, in_key_policy, schemas, tool_schemas

RECURSIVE = {"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "required": ["children"], "properties": {
    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}


def _schemas() -> list[dict]:
    return [tool["function"]["parameters"] for tool in tool_schemas().values()] + draw_examples(schemas(), 8, 5)


def test_instances_are_valid_distinct_in_key_order_and_the_same_for_the_same_seed():
    for schema in _schemas():
        drawn = sample_instances(schema, random.Random(7), 20)
        assert drawn, json.dumps(schema)
        assert all(schema_errors(schema, instance) == [] and in_key_policy(schema, instance) for instance in drawn)
        assert len({json.dumps(instance) for instance in drawn}) == len(drawn)
        assert drawn == sample_instances(schema, random.Random(7), 20)


def test_instances_reach_the_edges_of_bounds_and_lengths():
    # Ranges so wide that a uniform draw would all but never hit an end.
    integers = sample_instances({"type": "integer", "minimum": -3, "maximum": 10**6}, random.Random(0), 40)
    assert {-3, 10**6} <= set(integers)
    lengths = [len(text) for text in sample_instances({"type": "string", "minLength": 2, "maxLength": 66},
                                                      random.Random(0), 60)]
    assert lengths.count(2) >= 4 and lengths.count(66) >= 4  # a uniform length: once in 65 draws
    wide = [len(text) for text in sample_instances({"type": "string", "maxLength": 4000}, random.Random(0), 60)]
    assert max(wide) <= 64 < 4000  # a length far past the shortest is not drawn: it makes every check slow
    floats = [repr(value) for value in sample_instances({"type": "number"}, random.Random(0), 40)
              if isinstance(value, float)]
    assert any("e" in text for text in floats) and "-0.0" in floats  # the number forms json.dumps writes
    texts = "".join(sample_instances({"type": "string"}, random.Random(0), 40))
    assert '"' in texts and "\\" in texts and any(ord(char) < 0x20 for char in texts)


def test_a_recursive_ref_ends_within_the_depth_and_a_schema_without_instances_gives_none():
    def depth(node) -> int:
        return 1 + max(map(depth, node["children"]), default=0)
    drawn = sample_instances(RECURSIVE, random.Random(0), 10)
    assert drawn == [] or all(depth(instance) <= 3 for instance in drawn)  # a required child past REF_DEPTH: none
    chain = {"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
        "child": {"$ref": "#/$defs/node"}}}}}
    assert sample_instances(chain, random.Random(0), 10)
    assert sample_instances({"type": "integer", "minimum": 5, "maximum": 4}, random.Random(0), 3) == []


def test_pattern_texts_are_distinct_full_matches_and_fall_back_to_hypothesis_for_other_syntax():
    texts = pattern_texts("a[0-9]{2}|b", random.Random(1), 20)
    assert texts and len(set(texts)) == len(texts) and all(re.fullmatch("a[0-9]{2}|b", text) for text in texts)
    repeated = pattern_texts(r"([ab])\1", random.Random(1), 5)  # impl's parser refuses a backreference
    assert repeated and set(repeated) <= {"aa", "bb"}
    assert pattern_texts(r"[^\s\S]", random.Random(1), 5) == []


def test_sound_fires_through_hypothesis_on_a_pattern_impls_parser_refuses(monkeypatch):
    """Another implementation's pattern in syntax impl's parser does not read (``\\b``) is still drawn
    from, by Hypothesis: its bug (a negative number where the minimum is 0) is found."""
    module = types.ModuleType("word_boundary_impl")
    module.__dict__.update({name: getattr(impl, name) for name in impl.__all__})
    module.json_schema_to_regex = lambda schema: r'\{"n":-?[0-9]+\b\}'
    monkeypatch.setitem(sys.modules, module.__name__, module)
    subject = Subject("gpt2", family_path("gpt2"), Implementation(module.__name__))
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}
    found = run_check(subject, Case("structured", "sound", "gpt2", {"schema": schema, "seed": 1, "examples": 20}))
    assert found is not None and "minimum" in found.kind and json.loads(found.case.input["text"])["n"] < 0
