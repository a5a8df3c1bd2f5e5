"""Cases of the ``tokenizer`` component: corpus snippets, exhaustive sweeps and seeded random ids."""
from __future__ import annotations

from collections.abc import Iterator

from ..budget import Budget
from ..cases import corpus_snippets
from ..divergence import Case
from ..sources import Family
from .registry import Subject, cases

FUZZ_SWEEP_STRIDE = 17


@cases("tokenizer")
def tokenizer_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    from properties import strategies, sweeps

    oracle = subject.oracle

    def encode(text: str, special: bool) -> Case:
        return Case("tokenizer", "encode", family.name, {"text": text, "add_special_tokens": special})

    def decode(ids: list[int], skip: bool) -> Case:
        return Case("tokenizer", "decode", family.name, {"ids": ids, "skip_special_tokens": skip})

    snippets = corpus_snippets(budget)
    for text in snippets:
        yield encode(text, False)
        yield encode(text, True)
    # A fuzzed pipeline is there to exercise how components compose, which corpora and a sampled
    # sweep show as well as a full one; the full sweeps are for the families users ship.
    stride = budget.sweep_stride if family.origin != "fuzz" else max(budget.sweep_stride, FUZZ_SWEEP_STRIDE)
    for text in sweeps.sweep_texts(oracle, stride=stride):
        yield encode(text, False)
    # Random ids come from the strategies the property tests use (specials, byte-fallback runs that
    # are not valid UTF-8), drawn deterministically from the seed.
    facts = strategies.FamilyFacts.of(oracle)
    random_ids = strategies.draw_examples(facts.id_sequences(), budget.random_id_sequences, seed)
    for ids in [oracle.encode(t) for t in snippets] + [ids for ids in random_ids if ids]:
        yield decode(ids, False)
        yield decode(ids, True)
    every_id = sorted(oracle.vocab().values())[::stride]
    for token_id in every_id:
        yield decode([token_id], False)
    for start in range(0, len(every_id), 512):
        yield Case("tokenizer", "vocab", family.name, {"ids": every_id[start:start + 512]})
