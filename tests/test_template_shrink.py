"""Template minimization: a chat divergence on a long real template comes out on the few lines that
cause it, still valid Jinja that transformers renders, and the minimized case replays."""
from __future__ import annotations

import tests.broken_chat_impl as broken
from textbound.checks import Subject, run_check
from textbound.naming.divergence import Case
from textbound.oracles.chat_oracle import render, resolve, shared_templates
from textbound.plan.implementation import Implementation
from textbound.shrinking.minimize import minimize
from textbound.shrinking.template_shrink import compiles, parse, shrink_template, source_of

from .families import NEEDS_TEMPLATES, family_path

FAMILY = "gpt2"
LONG_TEMPLATE = "shared:vllm_llama3.1_json"  # 123 lines, tools rendered by tojson deep inside branches


@NEEDS_TEMPLATES
def test_every_shared_template_splits_into_a_tree_that_gives_its_source_back():
    read = 0
    for template in shared_templates():
        try:
            tree = parse(template.source)
        except ValueError:
            continue  # an unclosed tag (a broken template): shrink_template leaves it whole
        assert source_of(tree) == template.source, template.name
        read += 1
    assert read >= len(shared_templates()) - 3


def test_a_block_gives_way_to_the_branch_that_keeps_the_failure_and_balance_is_kept():
    source = "{% for m in messages %}{% if m.x %}A{% elif m.y %}B{{ m }}{% else %}C{% endif %}{% endfor %}end"
    smaller = shrink_template(source, lambda s: "B{{ m }}" in s)
    assert smaller == "B{{ m }}"
    kept = shrink_template(source, lambda s: "{% for" in s and "C" in s)
    assert compiles(kept) and "{% endfor %}" in kept and "A" not in kept


def test_an_unbalanced_template_is_left_whole():
    assert shrink_template("{% if x %}a", lambda s: True) == "{% if x %}a"


@NEEDS_TEMPLATES
def test_a_chat_mutant_on_a_long_real_template_shrinks_to_a_few_lines(monkeypatch):
    monkeypatch.setattr(broken, "BUGS", frozenset({"tojson_ascii"}))
    template = resolve(LONG_TEMPLATE, family_path(FAMILY))
    assert len(template.source.splitlines()) > 100
    case = Case("chat", "render", FAMILY, {
        "template": LONG_TEMPLATE, "template_digest": template.digest,
        "messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi there"}],
        "tools": [{"type": "function", "function": {"name": "café", "description": "Ünïcode",
                                                    "parameters": {"type": "object", "properties": {}}}}],
        "documents": None, "add_generation_prompt": True, "continue_final_message": False,
        "variables": {"bos_token": "<s>"}})
    subject = Subject(FAMILY, family_path(FAMILY), Implementation("tests.broken_chat_impl"))
    found = run_check(subject, case)
    assert found is not None
    minimized = minimize(subject, found).smallest
    smaller = minimized.input["template_source"]
    assert len(smaller.splitlines()) <= 3 and len(smaller) < len(template.source) // 20
    assert "tojson" in smaller
    render(smaller, minimized.input["messages"], tools=minimized.input["tools"])  # the oracle renders it
    replayed = run_check(subject, minimized)
    assert replayed is not None and replayed.signature == found.signature
    # The template the minimized case holds is the one checked: the unbroken impl agrees on it.
    healthy = Subject(FAMILY, family_path(FAMILY), Implementation("textbound.impl"))
    assert run_check(healthy, minimized) is None



def test_expressions_lose_the_filters_and_slices_the_failure_does_not_need_and_freed_statements_go():
    source = "{% set start = 1 %}{% for m in messages[start:] | list %}{{ m.content | trim }}{% endfor %}"
    smaller = shrink_template(source, lambda s: "m.content" in s and "in messages" in s)
    assert smaller == "{% for m in messages %}{{ m.content }}{% endfor %}"
