"""Benchmark of schema-forced decoding: building impl's Constraint for a typical tool over a large
vocabulary, and the time per allowed_tokens step, side by side with outlines-core and llguidance.

Targets, so that a server can build a constraint per request and step at decoding speed: the build
within BUILD_TARGET times outlines-core's, and a step under STEP_TARGET_MS on average. Every engine is timed on its own view of the same schema (impl's pattern,
outlines-core's regex, llguidance's grammar) over the same vocabulary bytes, and steps along the
same tokens: the oracle tokenizer's ids of one json.dumps instance.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from textbound.oracles.structured_oracles import (
    LlguidanceMask,
    OutlinesMask,
    TokenVocabulary,
    llguidance_grammar,
    outlines_regex,
)
from textbound.oracles.tokenizers_oracle import TokenizersOracle

BUILD_TARGET = 5.0
STEP_TARGET_MS = 1.0
BUILDS = 3  # builds timed per engine; the fastest counts
# A typical tool: five properties, one enum, one nested object.
TYPICAL_TOOL = {"type": "object", "properties": {
    "city": {"type": "string", "minLength": 1},
    "date": {"type": "string", "format": "date"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]},
    "days": {"type": "integer", "minimum": 1, "maximum": 14},
    "location": {"type": "object", "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}},
                 "required": ["lat", "lng"]}},
    "required": ["city", "unit", "location"]}
TYPICAL_ARGUMENTS = {"city": "Zürich", "date": "2025-03-14", "unit": "celsius", "days": 3,
                     "location": {"lat": 47.3769, "lng": 8.5417}}


def _fastest(build: Callable[[], object]) -> tuple[float, object]:
    best, built = float("inf"), None
    for _ in range(BUILDS):
        start = time.perf_counter()
        built = build()
        best = min(best, time.perf_counter() - start)
    return best, built


def _step_ms(ids: list[int], start, allowed: Callable, advance: Callable) -> float:
    """Mean milliseconds of one ``allowed`` call along ``ids`` (advancing is not timed)."""
    state, spent = start, 0.0
    for token_id in ids:
        begin = time.perf_counter()
        allowed(state)
        spent += time.perf_counter() - begin
        state = advance(state, token_id)
    return 1000 * spent / len(ids)


def structured_benchmark(impl, model_dir: Path) -> int:
    """Prints the comparison for the family in ``model_dir``; returns 0 (targets are reported, not enforced)."""
    oracle = TokenizersOracle.from_dir(model_dir)
    tokenizer = impl.Tokenizer.from_dir(model_dir)
    vocabulary = TokenVocabulary(tuple(tokenizer.vocab_bytes()), frozenset(oracle.special_ids), oracle.encode)
    vocabulary.outlines, vocabulary.llguidance  # converted once, outside the timed builds
    ids = oracle.encode(json.dumps(TYPICAL_ARGUMENTS, ensure_ascii=False))
    pattern = impl.json_schema_to_regex(TYPICAL_TOOL)
    impl_build, constraint = _fastest(lambda: impl.Constraint(pattern, tokenizer))
    outlines_build, outlines = _fastest(lambda: OutlinesMask(outlines_regex(TYPICAL_TOOL), vocabulary))
    llguidance_build, llguidance = _fastest(lambda: LlguidanceMask(llguidance_grammar(TYPICAL_TOOL), vocabulary))
    steps = {
        "impl": _step_ms(ids, constraint.start(), constraint.allowed_tokens, constraint.advance),
        "outlines-core": _step_ms(ids, outlines.start(), outlines.index.get_allowed_tokens, outlines.advance),
        "llguidance": _step_ms(ids, llguidance.start(), lambda s: s.compute_bitmask(), llguidance.advance),
    }
    builds = {"impl": impl_build, "outlines-core": outlines_build, "llguidance": llguidance_build}
    print(f"structured on {model_dir.name} ({len(vocabulary.token_bytes):,} tokens), a typical tool, "
          f"{len(ids)} steps:")
    print(f"{'engine':<14} {'build s':>9} {'vs outlines':>12} {'step ms':>9} {'vs outlines':>12}")
    for name in builds:
        print(f"{name:<14} {builds[name]:>9.3f} {builds[name] / outlines_build:>11.1f}x "
              f"{steps[name]:>9.3f} {steps[name] / steps['outlines-core']:>11.1f}x")
    build_met = impl_build <= BUILD_TARGET * outlines_build
    step_met = steps["impl"] < STEP_TARGET_MS
    print(f"build within {BUILD_TARGET:g}x outlines-core: {'met' if build_met else 'NOT met'}; "
          f"step under {STEP_TARGET_MS:g} ms: {'met' if step_met else 'NOT met'}")
    return 0
