"""The strata every budget checks (the quick one too): each case names its stratum, impl passes them
all, they cover every class they claim, and each mutant carrying a real-world bug of an input class
is caught by the stratum cases alone, named by the stratum that holds that class.

Only the stratum cases of one small family are checked, so this takes seconds.
"""
from __future__ import annotations

import unicodedata

import pytest

from textbound.checks import Subject, case_source, run_check
from textbound.corpora.character_strata import CONTEXTS, GENERAL_CATEGORIES, SPECIAL_CLASSES, character_strata
from textbound.families import embedded_family
from textbound.naming.divergence import COMPONENTS, STRATUM_FIELD
from textbound.oracles.chat_oracle import templates_dir
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation
from textbound.properties.conversations import request_strata

FAMILY = "gpt2"
STRATIFIED = [c for c in COMPONENTS if c != "structured"]  # structured's cases are another module's


def stratum_cases(component: str):
    family = embedded_family(FAMILY)
    return [case for case in case_source(family, component, BUDGETS["quick"], 0) if STRATUM_FIELD in case.input]


def caught_by(module: str, component: str) -> set[str]:
    """The strata on which ``module`` diverges where impl does not."""
    family = embedded_family(FAMILY)
    mutant, base = (Subject(family.name, family.path, Implementation(name)) for name in (module, "textbound.impl"))
    return {case.input[STRATUM_FIELD] for case in stratum_cases(component)
            if run_check(mutant, case) is not None and run_check(base, case) is None}


def test_every_character_class_stands_in_every_context():
    names = {stratum.name for stratum in character_strata()}
    texts = {stratum.text for stratum in character_strata()}
    for char in "".join(SPECIAL_CLASSES.values()):
        assert all(pattern.format(c=char) in texts for pattern in CONTEXTS.values()), hex(ord(char))
    covered = {unicodedata.category(stratum.text) for stratum in character_strata() if len(stratum.text) == 1}
    assert covered >= set(GENERAL_CATEGORIES)
    assert len(names) == len(character_strata())  # one name, one stratum


def test_request_strata_hold_every_shape_servers_send():
    strata = request_strata()
    tools = [request.get("tools", "absent") for request in strata.values()]
    assert "absent" in tools and None in tools and [] in tools
    assert {len(t) for t in tools if isinstance(t, list)} >= {0, 1, 2}
    contents = [m.get("content", "") for request in strata.values() for m in request["messages"]]
    assert {type(c) for c in contents} >= {str, list, type(None)}
    assert any(request["documents"] for request in strata.values())
    assert any(request["variables"] for request in strata.values())


@pytest.mark.parametrize("component", STRATIFIED)
def test_impl_passes_every_stratum(component: str):
    family = embedded_family(FAMILY)
    subject = Subject(family.name, family.path, Implementation("textbound.impl"))
    cases = stratum_cases(component)
    assert cases and all(isinstance(case.input[STRATUM_FIELD], str) for case in cases)
    found = [d for d in map(lambda case: run_check(subject, case), cases) if d is not None and not d.is_oracle_disagreement]
    assert not found, found[0].describe()


@pytest.mark.parametrize("mutant, component, stratum", [
    ("tokenizer_nbsp_as_space", "tokenizer", "no-break space: U+00A0"),
    ("tokenizer_bom_stripped", "tokenizer", "byte-order mark: U+FEFF at the start"),
    ("tokenizer_unicode_line_breaks", "tokenizer", "line or paragraph separator: U+2028"),
    ("chat_content_parts_flattened", "chat", "content: parts"),
    ("tools_starts_in_reasoning_ignored", "tools", "starts_in_reasoning: True"),
    ("detokenizer_unfinished_released", "detokenizer", "UTF-8 boundaries"),
    ("stops_wrong_stop_string", "stops", "stops ending together"),
])
def test_a_real_world_bug_is_caught_by_its_stratum(mutant: str, component: str, stratum: str):
    caught = caught_by(f"mutants.{mutant}", component)
    assert any(stratum in name for name in caught), sorted(caught)[:5]


@pytest.mark.skipif(templates_dir() is None, reason="needs $TEXTBOUND_TEMPLATES (the shared chat templates)")
def test_empty_tools_as_none_is_caught_by_the_empty_list_stratum():
    assert "tools: an empty list" in caught_by("textbound.mutants.chat_empty_tools_as_none", "chat")


def test_a_minimized_example_keeps_its_stratum_name():
    from textbound.mutants import BY_NAME
    from textbound.run.mutate import hunt
    verdict = hunt(BY_NAME["stops_wrong_stop_string"], [embedded_family(FAMILY)], examples=1, time_limit=120)
    assert verdict.outcome == "caught", verdict.error
    assert verdict.example[STRATUM_FIELD].startswith("stops ending together"), verdict.example


@pytest.mark.skipif(templates_dir() is None, reason="needs $TEXTBOUND_TEMPLATES (the shared chat templates)")
def test_the_telling_templates_follow_the_templates_folder(monkeypatch):
    from textbound.checks.chat_cases import telling_templates
    with monkeypatch.context() as unset:
        unset.delenv("TEXTBOUND_TEMPLATES")
        assert telling_templates("tools: an empty list") == ()
    assert telling_templates("tools: an empty list")  # not the answer cached while no folder was named
