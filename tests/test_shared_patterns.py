"""The shared form of impl's pattern: it expands to exactly the pattern, and samples drawn from it match."""
from __future__ import annotations

import json
import random
import re

import pytest

from textbound.impl import json_schema_to_regex
from textbound.properties.regex_samples import sample_matches, sample_shared
from textbound.properties.shared_patterns import TOKEN_MARK, SharedPattern, shared_pattern

# Many optional properties (the pattern is quadratic in them) and a recursive $ref unfolded 3 times.
WIDE_TREE = {"$ref": "#/definitions/node", "definitions": {"node": {"type": "object", "properties": {
    **{f"p{i}": {"type": "string", "maxLength": 3} for i in range(4)},
    "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}}}}}


def test_the_shared_form_expands_to_impls_pattern_and_is_much_smaller():
    pattern = json_schema_to_regex(WIDE_TREE)
    shared = shared_pattern(WIDE_TREE)
    assert shared.expands_to(pattern)
    assert shared.expanded_length() == len(pattern)
    assert len(shared.root) + sum(map(len, shared.pieces)) < len(pattern) / 10
    assert not shared.expands_to(pattern + "x") and not shared.expands_to(pattern[:-1] + "?")


def test_samples_of_the_shared_form_match_the_pattern_and_vary():
    pattern = re.compile(json_schema_to_regex(WIDE_TREE))
    samples = sample_shared(shared_pattern(WIDE_TREE), random.Random(0), 40)
    assert all(pattern.fullmatch(text) for text in samples)
    values = [json.loads(text) for text in samples]
    assert len({json.dumps(v) for v in values}) > 20
    assert any("children" in v and v["children"] for v in values)  # optional parts and repeats are drawn


def test_a_token_a_quantifier_binds_to_is_refused_not_misread():
    token = TOKEN_MARK + chr(0xF0000)
    with pytest.raises(ValueError, match="not in place"):
        sample_shared(SharedPattern(f"{token}?", ("(?:ab)",)), random.Random(0), 1)
    assert set(sample_shared(SharedPattern(f"x{token}", ("(?:ab|c)",)), random.Random(0), 20)) == {"xab", "xc"}


def test_an_empty_language_has_no_sample_and_a_plain_pattern_is_sampled_as_before():
    assert sample_shared(SharedPattern(r"[^\s\S]", ()), random.Random(0), 3) == []
    with pytest.raises(ValueError, match="matches no string"):
        sample_matches(r"[^\s\S]", random.Random(0), 3)
    assert set(sample_matches("a{2,3}", random.Random(0), 30)) == {"aa", "aaa"}
