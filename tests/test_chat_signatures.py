"""One chat bug, one signature, two at most (issue 18): every chat mutant of the catalogue and the
chat bugs it lacks (tests/one_bug/chat_*), checked on every quick chat case of one family (gpt2:
the project's ChatML and a window of the shared templates), are told by what the renderer does,
whichever template or characters show it; two bugs keep signatures of their own."""
from __future__ import annotations

import sys
import types

import pytest

from tests.one_bug import chat_render_stripped
from textbound import impl
from textbound.checks import Subject, case_source, run_check
from textbound.checks.chat import (
    blank_variable_kind,
    content_formats,
    edit_kind,
    escape_kind,
    json_kind,
    read_otherwise,
    render_answer,
    render_kind,
    request_readings,
    whitespace_kind,
)
from textbound.families import build_family, embedded_family
from textbound.oracles.chat_oracle import ChatRequest, frozen_clock
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation

from .families import NEEDS_TEMPLATES
from .test_shape import component_signatures

FAMILY = "gpt2"  # every chat bug here shows on it, and its cases cost no more than another family's

# (implementation, the signature its bug is named by)
ONE_BUG = [
    ("textbound.mutants.chat_trim_blocks_off", "chat/render/text: inserts '\\n'"),
    ("textbound.mutants.chat_lstrip_blocks_off", "chat/render/text: inserts ' '"),
    ("textbound.mutants.chat_tojson_ascii", "chat/render/text: escapes non-ASCII characters where transformers does not"),
    ("textbound.mutants.chat_tojson_sorted", "chat/render/text: sorts JSON object keys"),
    ("textbound.mutants.chat_generation_prompt_ignored", "chat/render/renders as if add_generation_prompt were false"),
    ("textbound.mutants.chat_continue_not_trimmed", "chat/render/renders as if continue_final_message were false"),
    ("textbound.mutants.chat_empty_tools_as_none", "chat/render/renders an empty tools list as none"),
    ("textbound.mutants.chat_content_parts_flattened", "chat/render/reads content as vLLM's 'string' content format"),
    ("textbound.mutants.chat_raise_exception_swallowed", "chat/render/does not raise the error transformers raises"),
    ("textbound.mutants.chat_content_parts_repr", "chat/render/reads content parts as their Python repr"),
    ("textbound.mutants.chat_arguments_decoded",
     "chat/render/reads string call arguments as objects (vLLM's chat preparation)"),
    ("textbound.mutants.chat_arguments_double_encoded", "chat/render/reads string call arguments JSON-encoded again"),
    ("textbound.mutants.chat_continue_empty_final", "chat/render/renders as if continue_final_message were false"),
    ("textbound.mutants.chat_enable_thinking_ignored", "chat/render/renders without the variable enable_thinking"),
    ("tests.one_bug.chat_render_stripped", "chat/render/text: drops the whitespace at the render's ends"),
    ("tests.one_bug.chat_none_content_as_text", "chat/render/text: inserts text"),
    ("tests.one_bug.chat_bos_token_empty", "chat/render/renders without the variable bos_token"),
]


@NEEDS_TEMPLATES
@pytest.mark.parametrize(("impl", "signature"), ONE_BUG)
def test_one_chat_bug_gives_one_signature_two_at_most(impl, signature):
    signatures = component_signatures(impl, FAMILY, "chat")
    assert 1 <= len(signatures) <= 2, sorted(signatures)
    assert signature in signatures, sorted(signatures)


# Bugs of one kind of output (whitespace kept or cut, tojson's options, a flag read otherwise)
# that a coarser kind would give one signature.
TWO_BUGS = [
    ("textbound.mutants.chat_trim_blocks_off", "textbound.mutants.chat_lstrip_blocks_off"),
    ("textbound.mutants.chat_trim_blocks_off", "tests.one_bug.chat_render_stripped"),
    ("textbound.mutants.chat_tojson_ascii", "textbound.mutants.chat_tojson_sorted"),
    ("textbound.mutants.chat_generation_prompt_ignored", "textbound.mutants.chat_continue_not_trimmed"),
    ("textbound.mutants.chat_raise_exception_swallowed", "tests.one_bug.chat_none_content_as_text"),
]


@NEEDS_TEMPLATES
@pytest.mark.parametrize(("one", "other"), TWO_BUGS)
def test_two_chat_bugs_give_different_signatures(one, other):
    mine, theirs = component_signatures(one, FAMILY, "chat"), component_signatures(other, FAMILY, "chat")
    assert mine and theirs and mine != theirs, (sorted(mine), sorted(theirs))


@pytest.mark.parametrize(("expected", "actual", "kind"), [
    ("a\nb", "a\n\nb", "inserts '\\n'"),  # a block tag's newline kept
    ("\na\n  b", "\n  a\n  b", "inserts ' '"),  # its indentation kept, at the start or not
    ("x\n", "x\n    ", "inserts ' '"),  # whitespace where the render had some already
    ("\na\n", "a", "drops the whitespace at the render's ends"),  # whichever whitespace a strip takes
    ("a ", "a\n", "moves whitespace"),
    ('{"city": "Zürich"}', '{"city": "Z\\u00fcrich"}', "escapes non-ASCII characters where transformers does not"),
    ('"\\ud83d\\ude00"', '"😀"', "does not escape the non-ASCII characters transformers escapes"),
    ('x {"b": 1, "a": {"d": 2, "c": 3}}', 'x {"a": {"c": 3, "d": 2}, "b": 1}', "sorts JSON object keys"),
    ('{"a": 1, "b": 2, "c": 3}', '{"c": 3, "a": 1, "b": 2}', "gives JSON object keys in another order"),
    ('[{"a": 1}] x', '[{"a":1}] y', "lays JSON out otherwise"),  # (JSON differing in spaces alone is whitespace)
    ('{"a": 1}', '{"a": 2}', "replaces text"),  # another value: no JSON kind
    ("<|im_start|>assistant\n", "", "drops text"),
    ("ab", "aNoneb", "inserts text"),
])
def test_a_render_difference_is_told_by_what_changed_not_where(expected, actual, kind):
    assert render_kind(expected, actual) == kind


def test_each_kind_of_render_difference_holds_its_own_shape_only():
    assert whitespace_kind("a b", "a c") is None
    assert escape_kind("é", "e") is None
    assert json_kind("{'a': 1}", "{'b': 1}") is None  # a Python dict's text is no JSON
    assert edit_kind("a", "b") == "replaces text"


def _request(**fields) -> ChatRequest:
    return ChatRequest.of({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": True, **fields})


def test_a_request_is_read_otherwise_one_option_at_a_time():
    readings = dict(request_readings(_request(tools=[], variables={"enable_thinking": False, "bos_token": "<s>"})))
    assert readings["renders as if add_generation_prompt were false"].add_generation_prompt is False
    assert readings["renders an empty tools list as none"].tools is None
    assert readings["renders no documents as an empty list"].documents == []
    assert readings["renders without the variable enable_thinking"].variables == {"bos_token": "<s>"}
    # a string variable left out, then given as "" (a flag is no text to leave out)
    assert [reading.variables for description, reading in request_readings(_request(variables={
        "enable_thinking": False, "bos_token": "<s>"})) if description == "renders without the variable bos_token"] == [
        {"enable_thinking": False}, {"enable_thinking": False, "bos_token": ""}]
    assert readings["reads content as vLLM's 'openai' content format"].messages == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    # never a pair transformers refuses: continuing the final message with a generation prompt
    continued = dict(request_readings(_request(add_generation_prompt=False, continue_final_message=True)))
    assert "renders as if add_generation_prompt were true" not in continued
    assert continued["renders as if continue_final_message were false"].continue_final_message is False


def test_content_parts_are_joined_as_vllm_string_format_joins_them():
    content = [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]
    parts = [{"role": "user", "content": content}]
    assert dict(content_formats(parts)) == {"string": [{"role": "user", "content": "a\nb"}]}


@pytest.fixture(scope="module")
def tokenizer_stripped():
    """impl whose Tokenizer strips its rendered text (as chat_render_stripped's does) while its
    render_chat is impl's own."""
    module = types.ModuleType("chat_tokenizer_stripped")
    module.__dict__.update({name: getattr(impl, name) for name in impl.__all__})
    module.Tokenizer = chat_render_stripped.Tokenizer
    sys.modules[module.__name__] = module
    yield module.__name__
    del sys.modules[module.__name__]


def test_ids_are_told_by_the_text_and_left_to_render_where_it_shows_the_same(tokenizer_stripped):
    cases = list(case_source(embedded_family(FAMILY), "chat", BUDGETS["quick"], 0))
    stripped_ids = next(case for case in cases if case.property == "ids" and case.input["add_generation_prompt"])
    render_case = next(case for case in cases if case.property == "render" and
                       {**case.input, "variables": stripped_ids.input["variables"]} == stripped_ids.input)
    folder = build_family(FAMILY)
    only_tokenizer = Subject(FAMILY, folder, Implementation(tokenizer_stripped))
    assert run_check(only_tokenizer, stripped_ids).kind == "text: drops the whitespace at the render's ends"
    assert run_check(only_tokenizer, render_case) is None
    both = Subject(FAMILY, folder, Implementation("tests.one_bug.chat_render_stripped"))
    assert run_check(both, stripped_ids) is None  # chat/render of the same request shows it
    assert run_check(both, render_case).kind == "text: drops the whitespace at the render's ends"


def test_a_bos_token_given_as_nothing_is_named_where_leaving_it_out_raises():
    """llama-server's `/apply-template` renders Llama 3.1's `bos_token + ...` without the BOS;
    transformers raises on that template when the variable is left out, so only "" reproduces it."""
    source = "{{ bos_token + messages[0]['content'] }}"
    request = _request(variables={"bos_token": "<s>"})
    with frozen_clock():
        assert render_answer(source)(request) == ("<s>Hi", None)
        assert read_otherwise(render_answer(source), request, "Hi", None) == "renders without the variable bos_token"


def test_a_blank_bos_token_and_another_reading_are_named_together():
    """llama-server's `/apply-template` leaves out the BOS and flattens content parts: neither
    reading alone gives its render, the two together do, and each is named."""
    source = ("{{ bos_token }}{% for m in messages %}{{ m['content'] if m['content'] is string "
              "else m['content'] | map(attribute='text') | join(',') }}{% endfor %}")
    request = _request(messages=[{"role": "user", "content": [{"type": "text", "text": "a"},
                                                              {"type": "text", "text": "b"}]}],
                       variables={"bos_token": "<s>"})
    with frozen_clock():
        assert render_answer(source)(request) == ("<s>a,b", None)
        assert read_otherwise(render_answer(source), request, "a,b", None) == "renders without the variable bos_token"
        assert read_otherwise(render_answer(source), request, "a\nb", None) == (
            "renders without the variable bos_token and reads content as vLLM's 'string' content format")


def test_a_blank_bos_token_is_named_before_what_else_differs():
    """A render lacking the BOS and keeping a space ``trim`` takes off: the first edit alone is the
    BOS ("drops text"), whatever else differs; told after the BOS given as "", the rest shows."""
    source = "{{ bos_token }}{% for m in messages %}{{ m['content'] | trim }}{% endfor %}"
    request = _request(messages=[{"role": "user", "content": "a\u2008"}], variables={"bos_token": "<s>"})
    answer = render_answer(source)
    assert blank_variable_kind(answer, request, "<s>a", "a\u2008") == (
        "renders without the variable bos_token, then text: inserts text")
    assert blank_variable_kind(answer, request, "<s>a", "<s>a\u2008") is None  # the BOS is there
