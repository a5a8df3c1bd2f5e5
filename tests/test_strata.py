"""The strata every budget checks (the quick one too): each case names its stratum, impl passes them
all, they cover every class they claim, and each mutant carrying a real-world bug of an input class
is caught by the stratum cases alone, named by the stratum that holds that class.

Only the stratum cases of one small family are checked, so this takes seconds.
"""
from __future__ import annotations

import functools
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


def stratum_cases(component: str, family_name: str = FAMILY) -> tuple:
    return _stratum_cases(component, family_name, templates_dir())


@functools.cache  # keyed by the templates folder too: the chat strata go to the shared templates where one is set
def _stratum_cases(component: str, family_name: str, _templates) -> tuple:
    family = embedded_family(family_name)
    return tuple(case for case in case_source(family, component, BUDGETS["quick"], 0) if STRATUM_FIELD in case.input)


def caught_by(module: str, component: str, family_name: str = FAMILY, stratum: str = "") -> set[str]:
    """The strata (those named ``stratum``, or all) on which ``module`` diverges where impl does not."""
    family = embedded_family(family_name)
    mutant, base = (Subject(family.name, family.path, Implementation(name)) for name in (module, "textbound.impl"))
    return {case.input[STRATUM_FIELD] for case in stratum_cases(component, family_name)
            if case.input[STRATUM_FIELD] == (stratum or case.input[STRATUM_FIELD])
            and run_check(mutant, case) is not None and run_check(base, case) is None}


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
    ("tools_thinking_off_ignored", "tools", "enable_thinking: false (the prompt closed an empty think block)"),
    ("detokenizer_unfinished_released", "detokenizer", "UTF-8 boundaries"),
    ("stops_wrong_stop_string", "stops", "stops ending together"),
])
def test_a_real_world_bug_is_caught_by_its_stratum(mutant: str, component: str, stratum: str):
    caught = caught_by(f"mutants.{mutant}", component)
    assert any(stratum in name for name in caught), sorted(caught)[:5]


CHAT_FAMILIES = ("gpt2", "qwen", "llama3", "sentencepiece")  # project ChatML, Qwen3-Coder, Llama 3.1, Mistral v3


@pytest.fixture
def no_shared_templates(monkeypatch):
    """The embedded default alone: its families' own templates must tell every shape apart."""
    monkeypatch.delenv("TEXTBOUND_TEMPLATES", raising=False)


@pytest.mark.parametrize("family", CHAT_FAMILIES)
def test_impl_renders_every_chat_stratum_on_each_embedded_template(family: str, no_shared_templates):
    subject = Subject(family, embedded_family(family).path, Implementation("textbound.impl"))
    cases = stratum_cases("chat", family)
    assert {case.input["template"] for case in cases} == {"project:chatml" if family == "gpt2" else "family"}
    found = [d for d in map(lambda case: run_check(subject, case), cases) if d is not None]
    assert not found, found[0].describe()


# Each chat-preparation bug, caught on the quick budget by the embedded families' own templates alone
# (no $TEXTBOUND_TEMPLATES), by the stratum holding its shape, on the families whose template style
# tells it: tools absent vs [] only where a template tests `tools is not none` (llama3, sentencepiece),
# enable_thinking only where a template reads it (gpt2's ChatML, qwen).
@pytest.mark.parametrize("mutant, stratum, families", [
    ("chat_arguments_decoded", "tools: an earlier call, arguments a compact JSON string", CHAT_FAMILIES),
    ("chat_arguments_double_encoded", "tools: an earlier call, arguments a compact JSON string", CHAT_FAMILIES),
    ("chat_content_parts_repr", "content: parts", CHAT_FAMILIES),
    ("chat_content_parts_flattened", "content: parts", CHAT_FAMILIES),
    ("chat_continue_empty_final", "ending: continue_final_message of an empty assistant message", CHAT_FAMILIES),
    ("chat_enable_thinking_ignored", "chat_template_kwargs: enable_thinking false", ("gpt2", "qwen")),
    ("chat_empty_tools_as_none", "tools: an empty list", ("llama3", "sentencepiece")),
])
def test_a_chat_preparation_bug_is_caught_without_shared_templates(mutant: str, stratum: str, families: tuple,
                                                                   no_shared_templates):
    for family in families:
        assert caught_by(f"textbound.mutants.{mutant}", "chat", family, stratum) == {stratum}, family


def test_vllm_prepared_strata_follow_vllms_conversion():
    strata = request_strata()
    decoded = strata["tools: an earlier call, arguments an empty string, as vLLM hands it over"]
    assert decoded["messages"][1]["tool_calls"][0]["function"]["arguments"] == {}
    assert strata["content: parts, as vLLM hands it over"]["messages"][0]["content"] == "What is the weather\n in Zürich?"
    # the compact string decodes to the object a plain stratum already sends: no stratum twice
    assert len({repr(request) for request in strata.values()}) == len(strata)


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
