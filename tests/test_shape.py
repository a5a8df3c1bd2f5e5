"""The shape of a difference names a divergence's kind, so that one bug gives one signature.

The examples are implementations with one bug each: three of the mutation catalogue and three it
lacks (tests/one_bug/), each checked on every quick case of one family as ``textbound check`` would.
A run's signatures are the kinds its checks return (minimizing keeps a divergence's signature).
"""
from __future__ import annotations

import pytest

from textbound.budget import BUDGETS
from textbound.checks import Subject, case_source, run_check
from textbound.families import build_family, embedded_family
from textbound.implementation import Implementation
from textbound.shape import Vocabulary, ids_shape, text_shape


@pytest.mark.parametrize(("expected", "actual", "shape"), [
    (" Hello", "Hello", "drops ' ' at the start"),
    ("    for", "   for", "drops ' ' at the start"),  # one of a run of spaces: the run's first
    ("a b", "ab", "drops ' ' before ASCII letters"),
    ("Hello.", "Hello .", "inserts ' ' before punctuation"),
    ("a\n", "a", "drops '\\n' at the end"),
    ("\u00e9", "e\u0301", "non-ASCII letters not NFC-normalized"),
    ("cafe", "cafe\u0301", "keeps accents on ASCII letters"),
    ("ab", "a\ufffd", "replaces ASCII letters by U+FFFD"),
    ("Ab", "ab", "lowercases ASCII letters"),
    ("1", "x", "replaces digits by ASCII letters"),
])
def test_text_shapes(expected, actual, shape):
    assert text_shape(expected, actual) == shape


@pytest.fixture(scope="module")
def gpt2():
    vocabulary = Vocabulary(build_family("gpt2"))
    return vocabulary, vocabulary.tokenizer.encode


def test_ids_shapes(gpt2):
    vocabulary, encode = gpt2
    ids = encode("say 12 things").ids
    assert ids_shape(ids, ids[:-1], vocabulary) == "drops tokens at the end"
    assert ids_shape(ids, ids + ids[:1], vocabulary) == "adds tokens at the end"
    assert ids_shape(encode(" a").ids, encode("a").ids, vocabulary) == "drops ' ' at the start"
    word = encode("hello").ids
    letters = [vocabulary.tokenizer.token_to_id(c) for c in "hello"]
    assert ids_shape(word, letters, vocabulary) == "splits ASCII letters differently"
    special = encode("<|endoftext|>").ids
    spelled = [i for c in "<|endoftext|>" for i in encode(c).ids]
    assert ids_shape(special, spelled, vocabulary) == "does not split off an added token"
    assert ids_shape(spelled, special, vocabulary) == "splits off an added token the oracle reads as text"
    assert ids_shape(special + word, word, vocabulary) == "drops an added token at the start"
    assert ids_shape(word, word + special, vocabulary) == "adds tokens at the end"
    assert ids_shape(word + word, word + special + word, vocabulary) == "adds an added token in the middle"
    assert ids_shape(ids, [-1], vocabulary) == "gives ids outside the vocabulary"


def test_ids_of_a_character_split_over_byte_tokens_are_described_whole(gpt2):
    vocabulary, encode = gpt2
    ids = encode("lé").ids
    assert vocabulary.covered(ids, len(ids) - 1, len(ids)) == "é"


ONE_BUG = [
    ("mutants.tokenizer_nfc_skipped", "qwen"),
    ("mutants.tokenizer_prefix_space_ignored", "roberta"),
    ("mutants.tokenizer_strip_accents_default", "wordpiece"),
    ("tests.one_bug.decode_drops_leading_space", "gpt2"),
    ("tests.one_bug.ascii_letters", "llama3"),
    ("tests.one_bug.lowercase_ascii", "bert"),
]


@pytest.mark.parametrize(("impl", "family"), ONE_BUG)
def test_one_bug_gives_one_signature_two_at_most(impl, family):
    subject = Subject(family, build_family(family), Implementation(impl))
    signatures = {found.signature for case in case_source(embedded_family(family), "tokenizer", BUDGETS["quick"], 0)
                  if (found := run_check(subject, case)) is not None}
    assert 1 <= len(signatures) <= 2, sorted(signatures)
