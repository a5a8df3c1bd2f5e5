"""How much a run checks: quick (tests, seconds), default (CI gate, minutes), deep (nightly)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    name: str
    corpus_snippets: int | None  # None: every snippet
    sweep_stride: int            # 1: every code point / vocabulary id / ASCII pair
    random_id_sequences: int
    fuzz_pipelines: int
    stream_splits: int           # random splits per streamed sequence (detokenizer, stops)
    generated_cases: int         # Hypothesis-generated inputs per family and component (chat, tools, structured)


BUDGETS = {
    "quick": Budget("quick", corpus_snippets=60, sweep_stride=251, random_id_sequences=40, fuzz_pipelines=2, stream_splits=2, generated_cases=30),
    "default": Budget("default", corpus_snippets=None, sweep_stride=1, random_id_sequences=1000, fuzz_pipelines=12, stream_splits=4, generated_cases=300),
    "deep": Budget("deep", corpus_snippets=None, sweep_stride=1, random_id_sequences=10000, fuzz_pipelines=80, stream_splits=16, generated_cases=3000),
}


def add_budget_option(parser, default: str) -> None:
    """``--budget`` of check, compare and mutate, each with its own default: ``add_budget_option(check,
    "default")`` lists quick, default and deep in that order, says what each checks and names the default."""
    parser.add_argument("--budget", choices=list(BUDGETS), default=default,
                        help="quick: samples, in seconds (the tests); default: every corpus snippet and the full "
                             f"sweeps (the CI gate); deep: more random cases and fuzzed pipelines (default: {default})")
