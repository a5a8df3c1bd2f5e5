"""Testing one pipeline stage against the oracle: a tokenizer with only that stage, texts leaning on
the characters it treats specially, and faults."""
from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import tokenizers
from hypothesis import strategies as st

from textbound.impl import TokenizerFileError
from textbound.properties.strategies import any_character


def oracle_with(stage: str, node: dict | None, vocab: dict[str, int] | None = None, unk: str = "[UNK]",
                added_tokens: list[dict] | None = None) -> tokenizers.Tokenizer:
    """A `tokenizers` tokenizer whose only non-trivial stage is ``stage`` (a tokenizer.json key)."""
    spec = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens or [],
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab or {unk: 0}, "unk_token": unk},
    }
    spec[stage] = node
    return tokenizers.Tokenizer.from_str(json.dumps(spec))


def assert_refused_by_both(oracle_build: Callable[[], object], impl_build: Callable[[], object],
                           path: str, message: str = "") -> None:
    """The node is faulty for the oracle too, and impl's error names its JSON path."""
    with pytest.raises(BaseException):  # a panic (PanicException) is no Exception
        oracle_build()  # the fault is real: tokenizers refuses the node too
    with pytest.raises(TokenizerFileError) as raised:
        impl_build()
    assert raised.value.where == path
    assert message in str(raised.value)


def short_text_leaning_on(characters: str, max_size: int = 24) -> st.SearchStrategy[str]:
    """Short text of any characters, or of mostly ``characters`` (those a stage treats specially)."""
    return st.one_of(st.text(any_character(), max_size=max_size),
                     st.text(st.one_of(st.sampled_from(characters), any_character()), max_size=max_size))
