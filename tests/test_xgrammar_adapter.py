"""textbound.adapters.xgrammar_adapter: its setup error; through a stand-in engine (impl behind the
constraint ops), that a schema's Constraint is built from the schema itself and that special tokens
are never allowed; and where $TEXTBOUND_XGRAMMAR_PYTHON names an environment holding xgrammar, its
masks for a schema (elsewhere those skip, saying so).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from textbound import impl
from textbound.adapters import EngineMissing
from textbound.adapters import xgrammar_adapter
from textbound.families import build_family

STAND_IN = Path(__file__).parent / "engines" / "xgrammar_stand_in.py"
XGRAMMAR = pytest.mark.skipif(not xgrammar_adapter.os.environ.get(xgrammar_adapter.PYTHON_ENV),
                              reason=f"xgrammar runs in an environment of its own "
                                     f"(${xgrammar_adapter.PYTHON_ENV} is not set; nox -s engine_xgrammar)")
BOOLEAN = {"type": "boolean"}


def test_without_the_engines_python_the_setup_says_what_is_missing(monkeypatch):
    monkeypatch.delenv(xgrammar_adapter.PYTHON_ENV, raising=False)
    with pytest.raises(EngineMissing, match="TEXTBOUND_XGRAMMAR_PYTHON.*nox -s engine_xgrammar"):
        xgrammar_adapter.__version__  # noqa: B018 - the harness's setup reads it


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setenv(xgrammar_adapter.PYTHON_ENV, sys.executable)
    monkeypatch.setattr(xgrammar_adapter, "ENGINE_SCRIPT", STAND_IN)
    return xgrammar_adapter.Tokenizer.from_dir(build_family("gpt2"))


def test_a_schemas_constraint_is_compiled_from_the_schema_and_a_foreign_pattern_as_a_regex(stand_in):
    """xgrammar's own JSON-schema converter is what vLLM runs: a pattern the adapter made from a
    schema must reach the engine as that schema, not as impl's regex."""
    pattern = xgrammar_adapter.json_schema_to_regex(BOOLEAN)
    from_schema = xgrammar_adapter.Constraint(pattern, stand_in)
    foreign = xgrammar_adapter.Constraint("(yes|no)", stand_in)
    assert from_schema._call("constraint_source") == {"pattern": pattern, "schema": BOOLEAN}
    assert foreign._call("constraint_source") == {"pattern": "(yes|no)", "schema": None}


def test_special_tokens_are_never_allowed_though_the_engine_may_end_there(stand_in):
    constraint = xgrammar_adapter.Constraint(xgrammar_adapter.json_schema_to_regex(BOOLEAN), stand_in)
    state = constraint.start()
    for token in stand_in.encode("true", add_special_tokens=False):
        state = constraint.advance(state, token)
    assert constraint.is_complete(state)
    assert constraint._call("constraint_allowed", state=state) == [stand_in.eos_token_id]
    assert constraint.allowed_tokens(state) == frozenset()


@XGRAMMAR
def test_xgrammars_mask_for_a_boolean_spells_true_and_ends_there():
    tokenizer = xgrammar_adapter.Tokenizer.from_dir(build_family("qwen"))
    constraint = xgrammar_adapter.Constraint(xgrammar_adapter.json_schema_to_regex(BOOLEAN), tokenizer)
    state = constraint.start()
    assert not constraint.is_complete(state)
    oracle = impl.Constraint(impl.json_schema_to_regex(BOOLEAN), impl.Tokenizer.from_dir(build_family("qwen")))
    oracle_state = oracle.start()
    for token in tokenizer.encode("true", add_special_tokens=False):
        # any_whitespace=True (vLLM's default) also lets a value begin with whitespace impl's regex refuses
        assert oracle.allowed_tokens(oracle_state) <= constraint.allowed_tokens(state)
        state, oracle_state = constraint.advance(state, token), oracle.advance(oracle_state, token)
    assert constraint.is_complete(state)
    with pytest.raises(Exception, match="not allowed"):
        constraint.advance(state, tokenizer.encode("x", add_special_tokens=False)[0])


@XGRAMMAR
def test_a_vocabulary_without_an_end_of_sequence_token_still_completes():
    """splitters' tokenizer names no eos token, so xgrammar has no stop token to allow: complete is
    the matcher's own is_completed, not a stop token in the bitmask."""
    tokenizer = xgrammar_adapter.Tokenizer.from_dir(build_family("splitters"))
    assert tokenizer.eos_token_id is None
    constraint = xgrammar_adapter.Constraint(xgrammar_adapter.json_schema_to_regex(BOOLEAN), tokenizer)
    vocab, state, rest = tokenizer.vocab_bytes(), constraint.start(), b"false"
    while rest:  # spelled by the mask's own tokens (the tokenizer's encoding begins with a metaspace)
        token = max((t for t in constraint.allowed_tokens(state) if vocab[t] and rest.startswith(vocab[t])),
                    key=lambda t: len(vocab[t]))
        state, rest = constraint.advance(state, token), rest[len(vocab[token]):]
    assert constraint.is_complete(state)
