"""What a run checks: the cases for each component, family and budget.

Sources, in the order of the design: the project's corpora, exhaustive sweeps (properties.sweeps)
and seeded random cases; fuzzed pipelines add whole families of their own (fuzz_families).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from oracles.tokenizers_oracle import TokenizersOracle

from .budget import Budget
from .checks import Subject
from .divergence import Case
from .sources import Family

FUZZ_SWEEP_STRIDE = 17


def corpus_snippets(budget: Budget) -> list[str]:
    from corpora import text_cases
    snippets = [text for _, text in text_cases()]
    return snippets if budget.corpus_snippets is None else snippets[: budget.corpus_snippets]


def tokenizer_cases(family: Family, budget: Budget, seed: int) -> Iterator[Case]:
    from properties import strategies, sweeps

    oracle = TokenizersOracle.from_dir(family.path)

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


def case_source(family: Family, component: str, budget: Budget, seed: int) -> Iterator[Case]:
    """Every case of ``component`` on ``family``; none for a component that has no checks yet."""
    if component == "tokenizer":
        return tokenizer_cases(family, budget, seed)
    if component in ("detokenizer", "stops"):
        from .stream_checks import stream_cases
        return iter(stream_cases(family, component, budget, seed, Subject(family.name, family.path, impl=None)))
    return iter(())


def fuzz_families(seed: int, count: int, out_dir: Path) -> list[Family]:
    """Random tokenizer.json pipelines trained with `tokenizers`, saved where the report can replay them."""
    if count <= 0:
        return []
    from properties.pipelines import fuzz_families as build
    return [Family(name, path, "fuzz") for name, path, _ in build(seed, count, Path(out_dir))]
