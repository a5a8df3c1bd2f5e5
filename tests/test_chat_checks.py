"""The chat checks: silent on transformers itself, firing on each bug of tests/broken_chat_impl.py at
the quick budget, minimizing to few messages and short strings, and honest about what a module
does not provide."""
from __future__ import annotations

import functools
import sys
import types

import pytest

import tests.broken_chat_impl as broken
import tests.transformers_chat_impl as transformers_chat_impl
from textbound.checks import Subject, case_source, run_check
from textbound.checks.chat_cases import SHARED_PER_REQUEST, family_offset, shared_window
from textbound.families import Family, embedded_family_names
from textbound.naming.divergence import Case
from textbound.oracles.chat_oracle import (
    FROZEN_MOMENT,
    TemplateNotFound,
    frozen_clock,
    render,
    resolve,
    shared_templates,
)
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation, PropertyNotProvided
from textbound.shrinking.minimize import minimize

from .families import NEEDS_MODELS, NEEDS_TEMPLATES, family_path

QUICK = BUDGETS["quick"]
SEED = 0
FAMILY = "gpt2"  # embedded: checked with the project's ChatML template

# Each bug and the signature it must show under; the shared templates have the block tags that
# trim_blocks acts on (ChatML's tags all strip themselves).
BUG_SIGNATURES = {
    "trim_blocks": "chat/render/text: inserts '\\n'",
    "tojson_ascii": "chat/render/text: escapes non-ASCII characters where transformers does not",
    "raise_swallowed": "chat/render/does not raise the error transformers raises",
    "continue_untrimmed": "chat/render/renders as if continue_final_message were false",
    "sanitize_ignored": "chat/sanitized_ids/ids: ",
    "mutates_messages": "chat/render/changed the caller's messages",
}
NEEDS = {"trim_blocks": NEEDS_TEMPLATES}


@functools.cache
def _cases(name: str) -> list[Case]:
    return list(case_source(Family(name, family_path(name), "embedded"), "chat", QUICK, SEED))


def _subject(name: str, impl: str) -> Subject:
    return Subject(name, family_path(name), Implementation(impl))


def _divergences(subject: Subject, cases: list[Case]) -> list:
    return [found for case in cases if (found := run_check(subject, case)) is not None]


@pytest.mark.parametrize("name", [FAMILY, pytest.param("qwen3", marks=NEEDS_MODELS)])
def test_transformers_itself_never_diverges(name):
    found = _divergences(_subject(name, "tests.transformers_chat_impl"), _cases(name))
    assert not found, found[0].describe()


@pytest.mark.parametrize("bug", [pytest.param(bug, marks=NEEDS.get(bug, ())) for bug in sorted(broken.ALL_BUGS)])
def test_each_bug_is_caught_at_the_quick_budget(bug, monkeypatch):
    monkeypatch.setattr(broken, "BUGS", frozenset({bug}))
    subject = _subject(FAMILY, "tests.broken_chat_impl")
    for case in _cases(FAMILY):
        found = run_check(subject, case)
        if found is not None and found.signature.startswith(BUG_SIGNATURES[bug]):
            assert found.first_difference["template"] == case.input["template"]
            return
    pytest.fail(f"bug {bug} not caught on {FAMILY} at the quick budget")


def test_a_conversation_minimizes_to_one_message_with_short_strings(monkeypatch):
    monkeypatch.setattr(broken, "BUGS", frozenset({"continue_untrimmed"}))
    subject = _subject(FAMILY, "tests.broken_chat_impl")
    found = next(d for d in _divergences(subject, _cases(FAMILY)) if len(d.case.input["messages"]) > 1)
    smallest = minimize(subject, found).smallest.input["messages"]
    assert len(smallest) == 1
    assert all(len(text) <= 1 for text in _strings(smallest[0]) if text not in ROLES)


ROLES = ("system", "user", "assistant", "tool")


def _strings(value) -> list[str]:
    """Every string in nested lists and dicts (their values, not their keys)."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def test_a_module_with_only_render_chat_is_checked_and_its_ids_are_not_passed(monkeypatch):
    module = types.ModuleType("render_chat_only")
    module.render_chat = transformers_chat_impl.render_chat
    monkeypatch.setitem(sys.modules, "render_chat_only", module)
    impl = Implementation("render_chat_only")
    assert impl.provides("chat") and impl.missing_for("chat", "ids") == ["Tokenizer"]
    subject = Subject(FAMILY, family_path(FAMILY), impl)
    cases = _cases(FAMILY)[:12]
    assert {run_check(subject, case) for case in cases if case.property == "render"} == {None}
    with pytest.raises(PropertyNotProvided, match="does not provide chat/ids"):  # a replayed case: refused
        run_check(subject, next(case for case in cases if case.property == "ids"))


def test_dates_are_frozen_on_both_sides():
    template = "{{ strftime_now('%Y-%m-%d %H:%M:%S') }}"
    subject = _subject(FAMILY, "textbound.impl")
    with frozen_clock():
        oracle_text = render(template, [{"role": "user", "content": "x"}])
        impl_text = subject.impl.render_chat(template, [{"role": "user", "content": "x"}])
    assert oracle_text == impl_text == FROZEN_MOMENT.strftime("%Y-%m-%d %H:%M:%S")


def test_a_case_names_its_template_and_unknown_or_changed_ones_are_refused_clearly():
    path = family_path(FAMILY)
    chatml = resolve("project:chatml", path)
    assert resolve("project:chatml", path, chatml.digest) == chatml
    with pytest.raises(TemplateNotFound, match="has changed"):
        resolve("project:chatml", path, "0" * 16)
    with pytest.raises(TemplateNotFound, match="'family'"):
        resolve("family", path)  # gpt2 ships no template
    with pytest.raises(TemplateNotFound, match="not shared:NAME"):
        resolve("elsewhere:x", path)


@NEEDS_TEMPLATES
def test_quick_runs_reach_every_shared_template_over_the_embedded_families():
    templates = shared_templates()
    reached = {template.name for name in embedded_family_names() for index in range(QUICK.generated_cases)
               for template in shared_window(templates, index, family_offset(name), SHARED_PER_REQUEST["quick"])}
    assert reached == {template.name for template in templates}
