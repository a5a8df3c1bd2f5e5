"""textbound.adapters.mlx_lm_adapter: its plumbing on a stand-in of mlx-lm (tests/engines/mlx_lm_stand_in.py:
the server's SSE chunks and message read back as the protocol's deltas and message, the format's
tokenizer, the detokenizer's steps, what is not provided); where mlx-lm is installed (nox -s
engine_mlx_lm), the real server code through the adapter; elsewhere those skip, saying so.
"""
from __future__ import annotations

import gc
import importlib
import sys

import pytest

from tests.engines import mlx_lm_stand_in
from tests.parser_engines import assert_encodes_and_decodes_as_tokenizers, assert_reads_a_hermes_call_whole_and_streamed
from textbound.adapters import EngineMissing
from textbound.families import build_family
from textbound.server.protocol import NotProvided

ADAPTER = "textbound.adapters.mlx_lm_adapter"


def fresh_adapter(monkeypatch):
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    return importlib.import_module(ADAPTER)


@pytest.fixture
def stand_in(monkeypatch):
    """The adapter imported anew over the stand-in of mlx-lm."""
    mlx_lm_stand_in.install(monkeypatch)
    yield fresh_adapter(monkeypatch)
    sys.modules.pop(ADAPTER, None)  # the next import gets the real mlx-lm, or its absence


@pytest.fixture(scope="module")
def real():
    """The adapter over the installed mlx-lm, or a skip saying how to get it."""
    pytest.importorskip("mlx_lm", reason="mlx-lm is not installed (pip install -e '.[mlx-lm]'; nox -s engine_mlx_lm)")
    return importlib.import_module(ADAPTER)


def test_without_mlx_lm_the_import_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlx_lm", None)
    with pytest.raises(EngineMissing, match=r"'mlx-lm'.*pip install 'textbound\[mlx-lm\]'"):
        fresh_adapter(monkeypatch)
    sys.modules.pop(ADAPTER, None)


def test_streamed_chunks_become_deltas_with_reasoning_as_reasoning_content(stand_in):
    parser = stand_in.OutputParser("hermes", starts_in_reasoning=True)
    assert parser.feed("hm") == [{"reasoning_content": "hm"}]
    assert parser.feed("", final=True) == []
    assert stand_in.__version__ == "mlx-lm 0.0-stand-in"


def test_a_parser_dropped_before_its_final_piece_ends_its_handlers_thread(stand_in):
    parser = stand_in.OutputParser("hermes")
    parser.feed("Hi")
    thread = parser._thread
    del parser
    gc.collect()
    thread.join(timeout=stand_in.SERVER_GONE_SECONDS)  # a guard against a hang, not a measure
    assert not thread.is_alive()


def test_reasoning_off_is_a_vocabulary_without_think_tokens(stand_in):
    """The server reads reasoning whenever the vocabulary has <think>: off, the model has none, so a
    request starting inside reasoning starts in content."""
    assert stand_in.OutputParser("hermes", reasoning=False, starts_in_reasoning=True).feed("hm") == [{"content": "hm"}]
    assert not stand_in.format_tokenizer("hermes", False).has_thinking


def test_a_mistral_model_has_no_think_tokens(stand_in):
    """Mistral's reasoning is [THINK], which mlx-lm does not read: a <think> in its tokenizer would
    be the adapter's invention."""
    assert not stand_in.format_tokenizer("mistral", True).has_thinking
    assert stand_in.format_tokenizer("hermes", True).has_thinking


def test_a_whole_completion_is_the_servers_message(stand_in):
    assert stand_in.parse_response("Hi", "hermes") == {"role": "assistant", "content": "Hi", "reasoning_content": None}


def test_a_format_mlx_lm_has_no_parser_for_is_not_provided(stand_in):
    with pytest.raises(NotProvided, match="format llama3_json: mlx-lm has no tool parser"):
        stand_in.OutputParser("llama3_json")
    with pytest.raises(NotProvided):
        stand_in.parse_response("x", "gpt_oss")


def test_a_template_mlx_lm_reads_as_another_format_is_refused(stand_in, monkeypatch):
    monkeypatch.setitem(stand_in.FORMATS, "hermes", stand_in.Format("qwen3_coder", "{{ tool_call.name }}", True))
    with pytest.raises(ValueError, match="inferred tool parser 'json_tools' for format 'hermes', expected 'qwen3_coder'"):
        stand_in.parse_response("x", "hermes")


def test_the_detokenizer_reads_last_segment_per_id_and_finalizes_at_flush(stand_in):
    tokenizer = stand_in.Tokenizer.from_dir(build_family("qwen"))
    prompt, ids = (tokenizer.encode(text, add_special_tokens=False) for text in ("Hi", " there "))
    detokenizer = stand_in.IncrementalDetokenizer(tokenizer, skip_special_tokens=False, prompt_ids=prompt)
    shown = [detokenizer.add([token_id]) for token_id in ids]
    assert "".join(shown) == " there" and detokenizer.flush() == " "  # the stand-in holds a trailing space
    assert detokenizer.prompt_text == "Hi" and detokenizer.text == " there "
    # The prompt is shown as the same detokenizer streams it alone: the stand-in holds its trailing space.
    assert stand_in.IncrementalDetokenizer(tokenizer, False, prompt_ids=prompt + ids).prompt_text == "Hi there"


def test_skipping_special_tokens_is_not_provided_only_where_one_is_streamed(stand_in):
    tokenizer = stand_in.Tokenizer.from_dir(build_family("qwen"))
    special = tokenizer.token_to_id("<|im_end|>")
    detokenizer = stand_in.IncrementalDetokenizer(tokenizer, skip_special_tokens=True)
    assert detokenizer.add(tokenizer.encode("ok", add_special_tokens=False)) == "ok"
    with pytest.raises(NotProvided, match="always show special tokens"):
        detokenizer.add([special])
    with pytest.raises(NotProvided):
        stand_in.IncrementalDetokenizer(tokenizer, skip_special_tokens=True, prompt_ids=[special])


def test_a_chat_request_is_prepared_as_the_server_prepares_it(stand_in):
    """The server's content step runs on a copy (the caller's messages stay as they were), and the
    generation prompt is always added."""
    tokenizer = stand_in.Tokenizer.from_dir(build_family("qwen"))
    messages = [{"role": "user", "content": None}]
    template = "{{ messages[0].content is none }}/{{ add_generation_prompt }}"
    assert tokenizer.decode(tokenizer.apply_chat_template(messages, template, add_generation_prompt=True)) == "False/True"
    assert messages == [{"role": "user", "content": None}]


def test_what_the_server_cannot_be_asked_in_a_chat_request_is_not_provided(stand_in):
    tokenizer = stand_in.Tokenizer.from_dir(build_family("qwen"))
    with pytest.raises(NotProvided, match="renders every chat request to ids with the generation prompt"):
        tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], "{{ 1 }}", documents=[{"text": "d"}])


# -- the real mlx-lm --------------------------------------------------------------------------------

def test_mlx_lms_server_reads_a_hermes_call_whole_and_streamed(real):
    assert_reads_a_hermes_call_whole_and_streamed(real)


def test_mlx_lm_encodes_and_decodes_as_tokenizers(real):
    assert_encodes_and_decodes_as_tokenizers(real)


def test_the_check_finds_mlx_lms_bpe_detokenizer_dropping_the_first_space(real):
    """The finding of the field report (reproducers/mlx_lm_bpe_detokenizer_trims_leading_space.py),
    found through the adapter: the ids of " D" stream as "D"."""
    from textbound.checks import Subject, run_check
    from textbound.naming.divergence import Case
    from textbound.plan.implementation import Implementation
    subject = Subject("gpt2", build_family("gpt2"), Implementation(ADAPTER))
    ids = subject.oracle.encode(" D")
    found = run_check(subject, Case("detokenizer", "stream", "gpt2",
                                    {"ids": ids, "splits": [], "skip_special_tokens": False, "prompt_ids": []}))
    assert found is not None and found.kind == "shown text the whole decode changes: drops ' '"
