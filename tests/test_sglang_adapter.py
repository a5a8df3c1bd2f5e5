"""textbound.adapters.sglang: its setup error, and where $TEXTBOUND_SGLANG_PYTHON names an
environment holding sglang, its Hermes parser through the adapter; elsewhere that skips, saying so.
"""
from __future__ import annotations

import sys
import types

import pytest

from tests.parser_engines import assert_encodes_and_decodes_as_tokenizers, assert_reads_a_hermes_call_whole_and_streamed
from textbound.adapters import EngineMissing
from textbound.adapters import sglang as sglang_adapter
from textbound.plan.implementation import Implementation

SGLANG = pytest.mark.skipif(not sglang_adapter.os.environ.get(sglang_adapter.PYTHON_ENV),
                            reason=f"SGLang runs in an environment of its own (${sglang_adapter.PYTHON_ENV} is not set)")


def test_without_the_engines_python_the_setup_says_what_is_missing(monkeypatch):
    monkeypatch.delenv(sglang_adapter.PYTHON_ENV, raising=False)
    with pytest.raises(EngineMissing, match="TEXTBOUND_SGLANG_PYTHON"):
        sglang_adapter.__version__  # noqa: B018 - the harness's setup reads it


@SGLANG
def test_sglangs_hermes_parser_reads_a_call_whole_and_streamed():
    assert_reads_a_hermes_call_whole_and_streamed(sglang_adapter)


def test_a_parser_without_a_detokenizer_is_not_provided_the_token_stream(monkeypatch):
    """tools/tokens feeds the parser what the implementation's own detokenizer streams: an engine
    with parsers alone (SGLang's) gets it noted as not provided, not a raised AttributeError."""
    parsers_only = types.ModuleType("parsers_only")
    parsers_only.OutputParser, parsers_only.parse_response, parsers_only.assemble = object, len, len
    monkeypatch.setitem(sys.modules, "parsers_only", parsers_only)
    impl = Implementation("parsers_only")
    assert impl.provides("tools") and impl.missing_for("tools", "tokens") == ["Tokenizer", "IncrementalDetokenizer"]


@SGLANG
def test_sglang_encodes_and_decodes_as_tokenizers():
    assert_encodes_and_decodes_as_tokenizers(sglang_adapter)


@SGLANG
def test_sglangs_detokenizer_streams_a_prompts_continuation_whole():
    from textbound.families import build_family
    tokenizer = sglang_adapter.Tokenizer.from_dir(build_family("qwen"))
    text = "Hello world, ünïcödé 😀 done"
    ids = tokenizer.encode(text, add_special_tokens=False)
    detokenizer = sglang_adapter.IncrementalDetokenizer(tokenizer, skip_special_tokens=True, prompt_ids=ids[:2])
    shown = "".join(detokenizer.add([token_id]) for token_id in ids[2:]) + detokenizer.flush()
    assert detokenizer.prompt_text + shown == text and detokenizer.text == shown


@SGLANG
def test_a_streamed_call_ends_with_the_servers_finish_step():
    """Kimi K2's output cut after the arguments marker: the detector streams the name with arguments
    '', and the server's _check_for_unstreamed_tool_args sends the '{}' it parsed on the finishing
    chunk; the adapter skipping that step streamed arguments ''."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    parser = sglang_adapter.OutputParser("kimi_k2", tools=tools, reasoning=False)
    text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
    message = sglang_adapter.assemble(parser.feed(text, final=True))
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [("f", "{}")]



@SGLANG
@pytest.mark.parametrize(("starts_in_reasoning", "expected"), [
    (False, {"content": "x</think>y", "reasoning_content": None}),
    (True, {"content": "y", "reasoning_content": "x"}),
])
def test_the_requests_reasoning_switch_reaches_the_server(starts_in_reasoning, expected):
    """Qwen3's reasoning parser is forced by the request's enable_thinking (the server's
    _get_reasoning_from_request, its detector's reasoning_default 'enable_thinking': on unless the
    request turns it off): an output that did not start inside reasoning is asked with it off, or the
    server reads 'x' as reasoning whatever the case said."""
    message = sglang_adapter.parse_response("x</think>y", "hermes", starts_in_reasoning=starts_in_reasoning)
    assert {field: message[field] for field in expected} == expected


@SGLANG
def test_each_feed_answers_the_servers_chunks_for_that_batch():
    """The server's stream is run a batch at a time: text it can release is sent at its own feed,
    not held to the finish; a feed after the finishing one is refused in one line."""
    parser = sglang_adapter.OutputParser("hermes", tools=None, reasoning=False)
    assert parser.feed("Hello ") == [{"content": "Hello "}]
    assert parser.feed("world", final=True) == [{"content": "world"}]
    with pytest.raises(ValueError, match="this stream has finished"):
        parser.feed("!")
