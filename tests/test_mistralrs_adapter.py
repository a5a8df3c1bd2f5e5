"""textbound.adapters.mistralrs_adapter: how it loads a GGUF and reaches mistral.rs's tokenizer
(against a stand-in ``mistralrs`` that records the calls, so this runs without mistral.rs), and, in
nox -s engine_mistralrs ($TEXTBOUND_ENGINE_TESTS=mistralrs), mistral.rs itself on qwen3's tiny GGUF.
"""
from __future__ import annotations

import importlib
import os
import sys
import types

import pytest

from textbound.families import build_family

from .families import NEEDS_MODELS, SHARED
from .gguf_files import write_gguf

ADAPTER = "textbound.adapters.mistralrs_adapter"
ENGINE = pytest.mark.skipif("mistralrs" not in os.environ.get("TEXTBOUND_ENGINE_TESTS", "").split(","),
                            reason="mistral.rs runs in nox -s engine_mistralrs (TEXTBOUND_ENGINE_TESTS=mistralrs)")


@pytest.fixture
def stand_in(monkeypatch):
    """A ``mistralrs`` whose Runner records how it was built and what it was asked: ids are the
    text's code points, text the ids' characters."""
    mistralrs = types.ModuleType("mistralrs")
    mistralrs.calls = []

    class Runner:
        def __init__(self, which, **options):
            mistralrs.calls.append(("Runner", which, options))

        def tokenize_text(self, text, add_special_tokens, enable_thinking, model_id=None):
            mistralrs.calls.append(("tokenize_text", text, add_special_tokens, enable_thinking))
            return [ord(c) for c in text]

        def detokenize_text(self, tokens, skip_special_tokens, model_id=None):
            mistralrs.calls.append(("detokenize_text", tokens, skip_special_tokens))
            return "".join(map(chr, tokens))

    mistralrs.Runner = Runner
    mistralrs.Which = types.SimpleNamespace(GGUF=lambda **where: ("GGUF", where))
    monkeypatch.setitem(sys.modules, "mistralrs", mistralrs)
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0-stand-in")
    sys.modules.pop(ADAPTER, None)
    yield mistralrs
    sys.modules.pop(ADAPTER, None)


@pytest.fixture(scope="module")
def qwen_gguf(tmp_path_factory):
    return write_gguf(build_family("qwen"), tmp_path_factory.mktemp("gguf") / "model.gguf", pre="qwen2")


def test_the_gguf_is_loaded_as_the_servers_gguf_option_loads_it_and_calls_reach_the_engine(stand_in, qwen_gguf):
    adapter = importlib.import_module(ADAPTER)
    tokenizer = adapter.Tokenizer(qwen_gguf)
    assert stand_in.calls[0] == ("Runner", ("GGUF", {"quantized_model_id": str(qwen_gguf.parent),
                                                     "quantized_filename": "model.gguf"}), {"no_paged_attn": True})
    assert tokenizer.encode("hé", add_special_tokens=False) == [104, 233]
    assert tokenizer.decode([104, 233], skip_special_tokens=True) == "hé"
    assert stand_in.calls[1:] == [("tokenize_text", "hé", False, None), ("detokenize_text", [104, 233], True)]


def test_the_vocabulary_is_the_ggufs_and_an_id_outside_it_never_reaches_the_engine(stand_in, qwen_gguf):
    tokenizer = importlib.import_module(ADAPTER).Tokenizer(qwen_gguf)
    token = tokenizer.id_to_token(0)
    assert token and tokenizer.token_to_id(token) == 0 and tokenizer.id_to_token(tokenizer.vocab_size) is None
    with pytest.raises(ValueError, match=f"invalid token id {tokenizer.vocab_size} at position 1"):
        tokenizer.decode([0, tokenizer.vocab_size])
    assert [call[0] for call in stand_in.calls] == ["Runner"]


@ENGINE
@NEEDS_MODELS
def test_mistralrs_encodes_and_decodes_qwen3_as_tokenizers():
    from tokenizers import Tokenizer as Reference
    adapter = importlib.import_module(ADAPTER)
    tokenizer = adapter.Tokenizer.from_dir(SHARED["qwen3"])
    reference = Reference.from_file(str(SHARED["qwen3"] / "tokenizer.json"))
    text = "Hello wörld 😀 <|im_end|>"
    ids = reference.encode(text, add_special_tokens=False).ids
    assert tokenizer.encode(text, add_special_tokens=False) == ids
    assert tokenizer.decode(ids) == reference.decode(ids, skip_special_tokens=False) == text
