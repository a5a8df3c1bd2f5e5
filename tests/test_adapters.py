"""The adapters: the JSON-lines engine protocol end to end (an engine wrapping impl is checked exactly as
impl is; a broken engine is caught; errors, crashes and missing ops are reported as such), and the
Python adapters (tokenizers finds nothing; minijinja, mistral-common and the structured engines
answer through impl's names).
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from textbound.checks import Subject, case_source, run_check
from textbound.families import Family, build_family
from textbound.naming.divergence import Case
from textbound.oracles.chat_oracle import Raised, outcome, render
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation, ImplementationError

from .families import NEEDS_MODELS, SHARED

ECHO_ENGINE = Path(__file__).parent / "engines" / "echo_engine.py"
JSONL_ENGINE = "textbound.adapters.jsonl_engine"


def echo_command(*options: str) -> str:
    return " ".join([sys.executable, str(ECHO_ENGINE), *options])


@pytest.fixture
def echo_engine(monkeypatch):
    """Points $TEXTBOUND_ENGINE_CMD at the echo engine (with ``options``) and returns the adapter."""
    def use(*options: str) -> Implementation:
        monkeypatch.setenv("TEXTBOUND_ENGINE_CMD", echo_command(*options))
        return Implementation(JSONL_ENGINE)
    return use


def some_cases(family: str, component: str, count: int) -> list[Case]:
    """The first ``count`` cases of the quick budget."""
    embedded = Family(family, build_family(family), "embedded")
    return list(itertools.islice(case_source(embedded, component, BUDGETS["quick"], 0), count))


def verdict(subject: Subject, case: Case) -> str | None:
    found = run_check(subject, case)
    return None if found is None else found.kind


# -- the JSON-lines protocol --------------------------------------------------------------------

@pytest.mark.parametrize("component,count", [("tokenizer", 30), ("detokenizer", 20), ("stops", 20),
                                             ("chat", 4), ("tools", 12)])
def test_echo_engine_is_checked_as_impl_is(echo_engine, component, count):
    """Through the protocol, every case gets impl's own verdict: nothing is lost or added on the way."""
    engine = echo_engine()
    assert engine.provides(component)
    path = build_family("gpt2")
    direct, through = Subject("gpt2", path, Implementation("textbound.impl")), Subject("gpt2", path, engine)
    cases = some_cases("gpt2", component, count)
    assert cases
    assert [verdict(through, case) for case in cases] == [verdict(direct, case) for case in cases]


def test_structured_names_through_the_protocol(echo_engine):
    from textbound import impl
    engine = echo_engine()
    tools = [{"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]
    assert engine.tool_call_pattern(tools, name="ping") == impl.tool_call_pattern(tools, name="ping")
    tokenizer = engine.Tokenizer.from_dir(build_family("gpt2"))
    here = impl.Constraint(r"\{\}", impl.Tokenizer.from_dir(build_family("gpt2")))
    there = engine.Constraint(r"\{\}", tokenizer)
    assert there.allowed_tokens(there.start()) == here.allowed_tokens(here.start())
    brace = tokenizer.encode("{", add_special_tokens=False)[0]
    assert there.is_complete(there.advance(there.start(), brace)) is False
    with pytest.raises(ValueError, match="not allowed"):
        there.advance(there.start(), tokenizer.encode("x", add_special_tokens=False)[0])


def test_a_broken_engine_is_caught(echo_engine):
    engine = echo_engine("--bug", "drop-last")
    subject = Subject("gpt2", build_family("gpt2"), engine)
    found = run_check(subject, Case("tokenizer", "encode", "gpt2", {"text": "a1 b2"}))
    assert found is not None and found.kind.startswith("ids:")
    assert engine.version.startswith("echo (impl)")


def test_engine_errors_keep_their_class(echo_engine):
    engine = echo_engine()
    template = "{{ raise_exception('no') }}"
    messages = [{"role": "user", "content": "Hi"}]
    _, expected = outcome(lambda: render(template, messages))
    _, actual = outcome(lambda: engine.render_chat(template, messages))
    assert isinstance(expected, Raised) and isinstance(actual, Raised)
    assert actual.error_class == expected.error_class == "jinja2.exceptions.TemplateError"
    with pytest.raises(ValueError, match="invalid token id"):
        engine.Tokenizer.from_dir(build_family("gpt2")).decode([-1])


def test_the_dates_templates_read_are_the_harness_clock(echo_engine):
    from textbound.oracles.chat_oracle import frozen_clock
    engine = echo_engine()
    with frozen_clock():
        assert engine.render_chat("{{ strftime_now('%Y-%m-%d') }}", [{"role": "user", "content": "x"}]) == "2025-03-14"


def test_names_follow_the_ops_the_engine_announces(echo_engine):
    ops = "load,encode,decode,token_to_id,id_to_token,vocab_size"
    engine = echo_engine("--ops", ops)
    assert engine.provides("tokenizer")
    assert engine.missing("stops") == ["StopChecker"]
    assert not hasattr(engine.Tokenizer, "apply_chat_template")


def test_a_crashing_engine_is_a_clear_error_and_restarts(echo_engine):
    engine = echo_engine("--bug", "crash-on-decode")
    from textbound.adapters.jsonl_engine import EngineFailure  # the module needs the engine's command
    tokenizer = engine.Tokenizer.from_dir(build_family("gpt2"))
    with pytest.raises(EngineFailure, match="exit status 3"):
        tokenizer.decode([1])
    assert engine.Tokenizer.from_dir(build_family("gpt2")).encode("hi", add_special_tokens=False)  # a fresh engine serves again


def test_a_refused_family_is_refused_again_without_a_process_left(echo_engine, monkeypatch, tmp_path):
    engine = echo_engine()
    from textbound.adapters import jsonl_engine as protocol
    started, start = [], protocol.EngineProcess.__init__

    def counted_start(process, *arguments):
        started.append(process)
        start(process, *arguments)

    monkeypatch.setattr(protocol.EngineProcess, "__init__", counted_start)
    for _ in range(2):
        with pytest.raises(Exception, match="tokenizer.json"):
            engine.Tokenizer.from_dir(tmp_path)
    assert len(started) == 1 and not started[0].alive  # one try, and its engine did not stay running


def test_one_family_at_a_time_closes_the_other_families_engines(echo_engine, monkeypatch):
    echo_engine()
    from textbound.adapters import jsonl_engine as protocol
    command = protocol.engine_command()
    family_less = protocol.engine(None, command)
    first = protocol.engine(build_family("gpt2"), command, one_family=True)
    second = protocol.engine(build_family("qwen"), command, one_family=True)
    assert (first.alive, second.alive, family_less.alive) == (False, True, True)
    assert protocol.engine(build_family("gpt2"), command, one_family=True).alive and not second.alive


def test_no_engine_command_fails_the_setup(monkeypatch):
    monkeypatch.delenv("TEXTBOUND_ENGINE_CMD", raising=False)
    monkeypatch.delitem(sys.modules, JSONL_ENGINE, raising=False)
    with pytest.raises(ImplementationError, match="TEXTBOUND_ENGINE_CMD"):
        Implementation(JSONL_ENGINE)


# -- tokenizers: the harness's sanity check ---------------------------------------------------

@pytest.mark.parametrize("family", ["gpt2", "sentencepiece", "metaspace", "wordpiece", "unigram"])
@pytest.mark.parametrize("component", ["tokenizer", "detokenizer"])
def test_tokenizers_finds_nothing(family, component):
    subject = Subject(family, build_family(family), Implementation("textbound.adapters.tokenizers_adapter"))
    cases = some_cases(family, component, 60)
    found = [d.describe() for d in map(lambda case: run_check(subject, case), cases) if d is not None]
    assert found == []


# -- minijinja -----------------------------------------------------------------------------------

def test_minijinja_renders_with_transformers_environment():
    minijinja_adapter = pytest.importorskip("textbound.adapters.minijinja_adapter",
                                            exc_type=ImportError)
    template = ("{%- for m in messages %}{% generation %}{{ m.content | tojson }}{% endgeneration %}\n"
                "{% endfor -%}{{ strftime_now('%Y') | length }}")
    messages = [{"role": "user", "content": "é <b>"}]
    assert minijinja_adapter.render_chat(template, messages) == render(template, messages)
    _, raised = outcome(lambda: minijinja_adapter.render_chat("{{ raise_exception('x') }}", messages))
    assert raised.error_class == "jinja2.exceptions.TemplateError"
    _, raised = outcome(lambda: minijinja_adapter.render_chat("{{ nothing.here }}", messages))
    assert raised.error_class == "jinja2.exceptions.UndefinedError"


# -- mistral-common ---------------------------------------------------------------------------

def test_mistral_common_tokenizes_requests_of_its_families():
    adapter = pytest.importorskip("textbound.adapters.mistral_common_adapter", exc_type=ImportError)
    from textbound.families import build_mistral_family
    tokenizer = adapter.Tokenizer.from_dir(build_mistral_family("mistral-tekken-240911"))
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "é"}]
    ids = tokenizer.apply_chat_template(messages)
    assert ids[0] == 1 and tokenizer.decode(ids, skip_special_tokens=True) == "Hiyoé"
    _, raised = outcome(lambda: tokenizer.apply_chat_template([{"role": "assistant", "content": "x"}]))
    assert raised.error_class == "jinja2.exceptions.TemplateError"
    with pytest.raises(NotImplementedError):
        adapter.render_chat("{{ messages }}", messages)


@NEEDS_MODELS
def test_mistral_common_reads_llama2_as_mistral_v1():
    adapter = pytest.importorskip("textbound.adapters.mistral_common_adapter", exc_type=ImportError)
    assert adapter.Tokenizer.from_dir(SHARED["llama2"]).source.name == "tokenizer.model.v1"
    with pytest.raises(ValueError, match="no tokenizer file"):
        adapter.Tokenizer.from_dir(build_family("gpt2"))


# -- outlines-core and llguidance -------------------------------------------------------------

@pytest.mark.parametrize("module", ["outlines_core_adapter", "llguidance_adapter"])
def test_structured_engines_mask_a_pattern(module):
    adapter = Implementation(f"textbound.adapters.{module}")
    assert adapter.provides("structured")
    tools = [{"type": "function", "function": {"name": "ping", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}]
    pattern = adapter.tool_call_pattern(tools, name="ping", format="llama3_json")
    tokenizer = adapter.Tokenizer.from_dir(build_family("gpt2"))
    constraint = adapter.Constraint(pattern, tokenizer)
    state = constraint.start()
    for token_id in tokenizer.encode('{"name": "ping", "parameters": {"n": 12}}', add_special_tokens=False):
        assert token_id in constraint.allowed_tokens(state)
        state = constraint.advance(state, token_id)
    assert constraint.is_complete(state)
    with pytest.raises(ValueError, match="unknown tool"):
        adapter.tool_call_pattern(tools, name="pong")
