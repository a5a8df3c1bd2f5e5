"""Cases of the ``tokenizer`` component: corpus snippets, the character strata, exhaustive sweeps,
every added token in every context, and seeded random ids.

The character strata (corpora.character_strata: every general category and every space, format and
control class, alone and in context) are checked at every budget, each case naming its stratum in
its input's STRATUM_FIELD, so that a report says which stratum caught a bug:

    {"text": "ab\u00a0cd", "add_special_tokens": false, "stratum": "no-break space: U+00A0 between words"}
"""
from __future__ import annotations

from collections.abc import Iterator

from textbound.corpora import text_cases
from textbound.corpora.character_strata import character_strata

from ..families import Family
from ..naming.divergence import STRATUM_FIELD, Case
from ..plan.budget import Budget
from ..plan.sweep_cache import disputed_code_points
from .registry import Subject, cases
from .streaming import vocabulary_survey

FUZZ_SWEEP_STRIDE = 17
# One character of each class an added token's neighbour may belong to.
CHARACTER_CLASSES = {"letter": "a", "digit": "7", "space": " ", "newline": "\n", "punctuation": ".",
                     "CJK": "中", "emoji": "😀"}


def corpus_snippets(budget: Budget) -> list[str]:
    """The corpora's snippets (corpora.text_cases), as many as the budget checks; the stream cases
    cut the same ones into deltas."""
    snippets = [text for _, text in text_cases()]
    return snippets if budget.corpus_snippets is None else snippets[: budget.corpus_snippets]


def added_token_texts(contents: list[str]) -> list[str]:
    """Each added token in every context class, at every budget (there are few, and splitting them
    off is where engines go wrong most): alone (at the start and the end), at the start before and
    at the end after each character class, between two of a class, and next to another added
    token (itself and the next one in the list, on each side).

    >>> added_token_texts(["<s>"])[:4]
    ['<s>', '<s>a', 'a<s>', 'a<s>a']
    """
    texts = []
    for index, token in enumerate(contents):
        texts.append(token)
        for char in CHARACTER_CLASSES.values():
            texts += [token + char, char + token, char + token + char]
        neighbour = contents[(index + 1) % len(contents)]
        texts += [token + token, token + neighbour, neighbour + token]
    return list(dict.fromkeys(texts))


def added_token_neighbourhoods(contents: list[str]) -> list[str]:
    """Each added token between every pair of context classes (or none), one on each side: where an
    engine's reading of a token's flags shows (single_word looks at both sides at once).

    >>> added_token_neighbourhoods(["<s>"])[:3]
    ['<s>', '<s>a', '<s>7']
    """
    around = ["", *CHARACTER_CLASSES.values()]
    return list(dict.fromkeys(before + token + after for token in contents for before in around for after in around))


@cases("tokenizer")
def tokenizer_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    from textbound.properties import strategies, sweeps

    oracle = subject.oracle

    def encode(text: str, special: bool, stratum: dict | None = None) -> Case:
        return Case("tokenizer", "encode", family.name, {"text": text, "add_special_tokens": special, **(stratum or {})})

    def decode(ids: list[int], skip: bool, stratum: dict | None = None) -> Case:
        return Case("tokenizer", "decode", family.name, {"ids": ids, "skip_special_tokens": skip, **(stratum or {})})

    for stratum in character_strata():
        named = {STRATUM_FIELD: stratum.name}
        yield encode(stratum.text, False, named)
        yield decode(oracle.encode(stratum.text), False, named)

    snippets = corpus_snippets(budget)
    for text in snippets:
        yield encode(text, False)
        yield encode(text, True)
    added = sorted(token.content for token in oracle.tokenizer.get_added_tokens_decoder().values() if token.content)
    in_context = added_token_texts(added)
    for text in in_context:
        yield encode(text, False)
    # A fuzzed pipeline is there to exercise how components compose, which corpora and a sampled
    # sweep show as well as a full one; the full sweeps are for the families users ship.
    stride = budget.sweep_stride if family.origin != "fuzz" else max(budget.sweep_stride, FUZZ_SWEEP_STRIDE)
    for text in sweeps.sweep_texts(oracle, stride=stride, disputed=disputed_code_points(stride)):
        yield encode(text, False)
    # Random ids come from the strategies the property tests use (specials, byte-fallback runs that
    # are not valid UTF-8), drawn deterministically from the seed.
    random_ids = strategies.draw_examples(vocabulary_survey(subject).id_sequences(), budget.random_id_sequences, seed)
    for ids in [oracle.encode(t) for t in snippets + in_context] + [ids for ids in random_ids if ids]:
        yield decode(ids, False)
        yield decode(ids, True)
    every_id = sorted(oracle.vocab().values())[::stride]
    for token_id in every_id:
        yield decode([token_id], False)
    for start in range(0, len(every_id), 512):
        yield Case("tokenizer", "vocab", family.name, {"ids": every_id[start:start + 512]})
