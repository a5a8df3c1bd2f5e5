"""The request shapes servers break on (textbound.checks.shapes, issue 38): the order a server feeds
streams in, impl clean on every shape stratum, and each shape's mutant caught by its property on the
strata alone (part of every budget, the quick one too).

Only one small family's shape cases are checked per test: seconds.
"""
from __future__ import annotations

import functools

import pytest

from textbound.checks import Subject, case_source, run_check
from textbound.checks.shapes import round_robin
from textbound.families import embedded_family
from textbound.naming.divergence import STRATUM_FIELD
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation

SHAPE_PROPERTIES = {("detokenizer", "interleaved"), ("stops", "interleaved"), ("tools", "interleaved"),
                    ("tools", "pipeline"), ("stops", "pipeline"), ("tools", "stream"), ("tools", "whole"),
                    ("detokenizer", "stream")}


@functools.cache  # building a component's cases draws all of them: once per family and component
def shape_cases(family_name: str, component: str) -> tuple:
    family = embedded_family(family_name)
    return tuple(case for case in case_source(family, component, BUDGETS["quick"], 0)
                 if STRATUM_FIELD in case.input and (case.component, case.property) in SHAPE_PROPERTIES)


def catching(module: str, family_name: str, component: str) -> set[str]:
    """The properties (``component/property``) whose shape cases ``module`` diverges on."""
    family = embedded_family(family_name)
    subject = Subject(family.name, family.path, Implementation(module))
    return {f"{case.component}/{case.property}" for case in shape_cases(family_name, component)
            if run_check(subject, case) is not None}


def test_round_robin_staggers_and_alternates():
    assert round_robin([2, 2]) == [0, 0, 1, 1]
    assert round_robin([3, 1, 2]) == [0, 0, 1, 0, 2, 2]
    order = round_robin([5, 4, 3, 2])
    assert sorted(order) == sorted([0] * 5 + [1] * 4 + [2] * 3 + [3] * 2)
    assert order[:4] == [0, 0, 1, 0]  # a stream starts while the earlier ones are mid-stream


@pytest.mark.parametrize("family_name", ["gpt2", "qwen"])
@pytest.mark.parametrize("component", ["detokenizer", "stops", "tools"])
def test_impl_passes_every_shape_stratum(family_name: str, component: str):
    family = embedded_family(family_name)
    subject = Subject(family.name, family.path, Implementation("textbound.impl"))
    cases = shape_cases(family_name, component)
    assert cases
    found = [(case.input[STRATUM_FIELD], d.kind) for case in cases if (d := run_check(subject, case))
             and not d.kind.startswith("oracle disagreement")]
    assert found == []


def test_quick_budget_draws_every_shape():
    tools = {case.input[STRATUM_FIELD] for case in shape_cases("qwen", "tools")}
    for shape in ("at the family's token boundaries", "each whole call in one delta", "the whole output in one delta",
                  "the reasoning's closing tag and the next call's opening in one delta",
                  "a stop inside the reasoning, skip_special_tokens False",
                  "a stop inside the first call, skip_special_tokens False",
                  "no stop, skip_special_tokens True"):
        assert any(shape in stratum for stratum in tools), shape
    for component in ("detokenizer", "stops", "tools"):
        interleaved = [case for case in shape_cases("gpt2", component) if case.property == "interleaved"]
        counts = {len(case.input["streams"]) for case in interleaved}
        assert counts == {2, 3, 4}, component


@pytest.mark.parametrize("mutant, family_name, component, caught_by", [
    ("detokenizer_shared_state", "gpt2", "detokenizer", "detokenizer/interleaved"),
    ("stops_shared_state", "gpt2", "stops", "stops/interleaved"),
    ("tools_shared_parser_state", "gpt2", "tools", "tools/interleaved"),
    ("tools_open_close_one_delta", "gpt2", "tools", "tools/stream"),
    # The parser's reading of an output a stop ended: named by the pipeline cases' twins.
    ("tools_unclosed_reasoning_as_content", "gpt2", "tools", "tools/whole"),
    ("tools_interrupted_call_dropped", "gpt2", "tools", "tools/stream"),
    # The careless server's flag on the family whose markers are added tokens: the detokenizer's text
    # differs before the parser, which the stops/pipeline twin of the tools/pipeline case names.
    ("detokenizer_skips_added_tokens", "qwen", "stops", "stops/pipeline"),
    # ... and the detokenizer's own stratum of an added token that is not special, skipped.
    ("detokenizer_skips_added_tokens", "qwen", "detokenizer", "detokenizer/stream"),
])
def test_each_shape_mutant_is_caught_by_its_property(mutant: str, family_name: str, component: str, caught_by: str):
    assert caught_by in catching(f"textbound.mutants.{mutant}", family_name, component)


def test_the_pipeline_names_what_a_new_parser_fed_the_same_pieces_does_not_reproduce():
    """A parser wrong on every other instance: in the pipeline it is wrong where a new one fed the
    same pieces is right, which no twin reproduces."""
    kinds = {d.kind for d in (run_check(Subject("gpt2", embedded_family("gpt2").path,
                                                Implementation("tests.shapes_broken_impl")), case)
                              for case in shape_cases("gpt2", "tools") if case.property == "pipeline") if d}
    assert "pipeline: reasoning_content differs" in kinds
