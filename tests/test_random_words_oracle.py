"""impl against the ``tokenizers`` oracle on words no cache has seen: random lowercase words (what
``textbound bench``'s random-words row times), words in other scripts and long words, one text of
them per family and the same words one text each.

Every word is new to impl's piece caches, so each goes through the merging the bench times
(BPE's batched scan, the queue for long pieces, the chunks of a piece without a pre-tokenizer).
"""
from __future__ import annotations

import functools
import random
import string

import pytest
from tokenizers import Tokenizer as OracleTokenizer

from textbound.impl import Tokenizer
from textbound.impl.tokenizer import models
from tests.families import FAMILIES, family_path

WORDS = 1500
SCRIPTS = (string.ascii_lowercase, string.ascii_letters + "0123456789", "αβγδεζηθικλμνξοπρστυφχψω",
           "абвгдежзийклмнопрстуфхцчшщъыьэюя", "的一是不了人我在有他这为之大来以个中上们", "ابتثجحخدذرزسشصضطظعغفقكلمنهوي")


def random_words(seed: str) -> list[str]:
    """WORDS words of 1 to 14 characters, most lowercase Latin, some of other scripts, and a few
    of 50 to 300 characters (past the scanning merge's and the chunking's length limits)."""
    rng = random.Random(seed)
    words = []
    for _ in range(WORDS):
        alphabet = SCRIPTS[0] if rng.random() < 0.7 else rng.choice(SCRIPTS)
        size = rng.randint(50, 300) if rng.random() < 0.01 else rng.randint(1, 14)
        words.append("".join(rng.choices(alphabet, k=size)))
    return words


@functools.cache
def engines(family: str) -> tuple[Tokenizer, OracleTokenizer]:
    path = family_path(family)
    return Tokenizer.from_dir(path), OracleTokenizer.from_file(str(path / "tokenizer.json"))


def assert_like_oracle(family: str, words: list[str]) -> None:
    tokenizer, oracle = engines(family)
    text = " ".join(words)
    assert tokenizer.encode(text, add_special_tokens=False) == oracle.encode(text, add_special_tokens=False).ids
    expected = [encoding.ids for encoding in oracle.encode_batch(words, add_special_tokens=False)]
    for word, ids, oracle_ids in zip(words, tokenizer.encode_batch(words, add_special_tokens=False), expected):
        assert ids == oracle_ids, word


@pytest.mark.parametrize("family", FAMILIES)
def test_random_words_encode_as_the_oracle_does(family):
    assert_like_oracle(family, random_words(f"words-{family}"))


def test_a_wrong_merge_of_new_words_is_caught(monkeypatch):
    # The scanning merge made to swap the last two ids of a piece: the comparison above must fail.
    scan = models.BPE._merge_by_scan

    def one_merge_short(self, symbols, rules, ends, *args):
        merged = scan(self, symbols, rules, ends, *args)
        return [ids if ids is None or len(ids) < 2 else ids[:-2] + [ids[-2], ids[-1]][::-1] for ids in merged]

    monkeypatch.setattr(models.BPE, "_merge_by_scan", one_merge_short)
    engines.cache_clear()
    try:
        with pytest.raises(AssertionError):
            assert_like_oracle("gpt2", random_words("broken"))
    finally:
        engines.cache_clear()
