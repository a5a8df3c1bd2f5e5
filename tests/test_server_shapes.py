"""The request shapes servers break on (issue 38), against the fake vLLM server: the output is
steered to every shape on every quick run; the clean fake is clean on every shape property, one
token a chunk or several (vLLM's --stream-interval); each shape bug of the fake is caught by the
property meant for it; a server that ignores steering is found by the features probe and noted."""
from __future__ import annotations

import sys

import pytest

from tests.fake_vllm_server import SHAPE_BUGS, FakeVllmServer
from textbound.checks import Subject, case_source, run_check
from textbound.checks.server_cases import output_shapes
from textbound.checks.server_output import steering_note
from textbound.checks.server_shapes import _entry_problem, _logprob_text, finish_problem
from textbound.cli import EXIT_SETUP, main
from textbound.families import Family, build_family
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import SERVER, Implementation
from textbound.server.dialect import Generation, Logprob, open_dialect
from textbound.server.features import steering

ADAPTER = "textbound.adapters.server"
QUICK = BUDGETS["quick"]
SHAPE_PROPERTIES = [("detokenizer", "server_choices"), ("detokenizer", "server_concurrent"),
                    ("detokenizer", "server_logprobs"), ("detokenizer", "server_echo"),
                    ("detokenizer", "server_finish"), ("detokenizer", "server_stream"), ("stops", "server")]
# Each shape bug of the fake, the property meant to catch it and how its divergence's kind begins.
CAUGHT_BY = {
    "decode_alone": ("detokenizer", "server_stream", "shown a byte run otherwise than the decode"),
    "tail_dropped": ("detokenizer", "server_stream", "text: drops U+FFFD at the end"),
    "prompt_leak": ("detokenizer", "server_stream", "shown"),
    "shared_choices": ("detokenizer", "server_choices", "text is not the decode of its ids"),
    "concurrent_state": ("detokenizer", "server_concurrent", "shown"),
    "concurrent_seed": ("detokenizer", "server_concurrent", "a concurrent request differs from the same request alone"),
    "logprob_pieces": ("detokenizer", "server_logprobs", "logprob tokens do not spell the text"),
    "echo_text": ("detokenizer", "server_echo", "echoed text is not the prompt's decode"),
    "prompt_logprobs_shift": ("detokenizer", "server_echo", "prompt logprobs do not line up"),
    "finish_length": ("detokenizer", "server_finish", "finish_reason stop after max_tokens ids"),
    "usage_count": ("detokenizer", "server_finish", "usage completion_tokens is not the ids counted"),
    "tool_calls_at_length": ("tools", "server", "finish_reason tool_calls at max_tokens"),
}


@pytest.fixture(scope="module")
def family() -> Family:
    return Family("llama3", build_family("llama3"), "embedded")


@pytest.fixture(autouse=True)
def fresh_adapter(monkeypatch):
    yield
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)


def subject_of(monkeypatch, family: Family, url: str) -> Subject:
    """A subject checking the server at ``url`` (the adapter imported afresh, as a pool worker does)."""
    monkeypatch.setenv("TEXTBOUND_SERVER_URL", url)
    monkeypatch.setenv("TEXTBOUND_SERVER_DIALECT", "vllm")
    monkeypatch.setenv("TEXTBOUND_SERVER_TIMEOUT", "5")
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    return Subject(family.name, family.path, Implementation(ADAPTER))


def property_cases(family: Family, component: str, prop: str) -> list:
    return [case for case in case_source(family, component, QUICK, 0, source=SERVER) if case.property == prop]


def kinds(subject: Subject, cases: list) -> list[str]:
    return [found.kind for found in (run_check(subject, case) for case in cases) if found]


def test_every_shape_bug_has_a_property():
    assert set(CAUGHT_BY) == SHAPE_BUGS


def test_a_quick_run_steers_to_every_shape_the_vocabulary_has(family):
    subject = Subject(family.name, family.path, None)
    shapes = output_shapes(subject)
    assert {"split characters", "byte runs", "special and added tokens", "prompt mid-character"} <= set(shapes)
    for component, prop in (("detokenizer", "server_stream"), ("stops", "server")):
        drawn = {case.input["shape"] for case in property_cases(family, component, prop)}
        assert drawn == set(shapes), (component, prop)
    ending, steer = shapes["prompt mid-character"]
    mid = [case for case in property_cases(family, "detokenizer", "server_stream")
           if case.input["shape"] == "prompt mid-character"]
    assert mid and all(case.input["prompt"][-len(ending):] == list(ending) for case in mid)
    assert all(case.input["steer"] == list(steer) for case in mid)


@pytest.mark.parametrize("tokens_per_chunk", [1, 3])
def test_the_clean_fake_is_clean_on_every_shape_property(monkeypatch, family, tokens_per_chunk):
    with FakeVllmServer(family.path, tokens_per_chunk=tokens_per_chunk) as server:
        subject = subject_of(monkeypatch, family, server.url)
        for component, prop in SHAPE_PROPERTIES:
            cases = property_cases(family, component, prop)
            assert cases and kinds(subject, cases) == [], (component, prop)


@pytest.mark.parametrize("bug", sorted(SHAPE_BUGS))
def test_each_shape_bug_of_the_fake_is_caught_by_its_property(monkeypatch, family, bug):
    component, prop, kind = CAUGHT_BY[bug]
    with FakeVllmServer(family.path, bugs={bug}) as server:
        found = kinds(subject_of(monkeypatch, family, server.url), property_cases(family, component, prop))
    assert any(k.startswith(kind) for k in found), found


@pytest.mark.parametrize("bug", ["decode_alone", "tail_dropped", "shared_choices"])
def test_several_tokens_a_chunk_still_show_the_bug(monkeypatch, family, bug):
    component, prop, kind = CAUGHT_BY[bug]
    with FakeVllmServer(family.path, bugs={bug}, tokens_per_chunk=3) as server:
        found = kinds(subject_of(monkeypatch, family, server.url), property_cases(family, component, prop))
    assert any(k.startswith(kind) for k in found), found


def test_the_probe_names_the_steering_the_server_honours_and_notes_a_server_that_honours_none(family):
    with FakeVllmServer(family.path) as server:
        dialect = open_dialect("vllm", server.url, timeout=5)
        assert steering(dialect)[0] == "allowed_token_ids"
        assert steering_note(dialect) is None
        dialect.steering = ()  # a server without a way to steer, as far as the run knows
        assert steering(dialect)[0] is None
        assert "ran unsteered" in steering_note(dialect)
    with FakeVllmServer(family.path, bugs={"steering_ignored"}) as server:
        way, why = steering(open_dialect("vllm", server.url, timeout=5))
    assert way is None and "ignored" in why


def test_finish_reasons_follow_the_ids_counted():
    assert finish_problem(Generation("", (1, 2), "length"), 2) is None
    assert finish_problem(Generation("", (1,), "stop"), 2) is None
    assert finish_problem(Generation("", (1, 2), "stop"), 2) == "finish_reason stop after max_tokens ids"
    assert finish_problem(Generation("", (1,), "length"), 2) == "finish_reason length before max_tokens ids"
    assert finish_problem(Generation("", (1, 2, 3), "length"), 2) == "3 ids for max_tokens 2"


def test_llama_cpp_logprob_pieces_spell_the_text_by_their_bytes():
    """llama.cpp sends no entry for a token ending mid-character; the next entry's bytes carry the
    whole character and its token is their longest UTF-8 beginning."""
    pieces = (Logprob("", (0xC3,), 7), Logprob("é", (0xC3, 0xA9), 8))
    assert _entry_problem(pieces[1:], (7, 8), "pieces") is None
    assert _logprob_text(pieces[1:], "pieces") == "é"
    assert _entry_problem(pieces, (7, 8), "pieces") is None
    assert _entry_problem((Logprob("x", (0xC3, 0xA9), 8),), (7, 8), "pieces") == "an entry's token is not its bytes' text"
    assert _entry_problem((Logprob("é", (0xC3, 0xA9), 9),), (7, 8), "pieces").startswith("logprob entries name ids")
    # a lone continuation byte is no cut-off character: sent, and shown as U+FFFD in the JSON answer
    assert _entry_problem((Logprob("\ufffd", (0xA9,), 8),), (8,), "pieces") is None
    assert _entry_problem((Logprob("é", (0xC3, 0xA9, 0xE2), 8),), (8,), "pieces") is None


def test_a_concurrency_out_of_range_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--server", "http://127.0.0.1:9", "--server-concurrency", "9", "--family", "gpt2"])
    assert exit_info.value.code == EXIT_SETUP
    assert "--server-concurrency: '9': expected a whole number from 2 to 8" in capsys.readouterr().err
