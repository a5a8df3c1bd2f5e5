"""``textbound bench``: speed as ratios against the oracle, measured in one run.

Absolute times depend on the machine; a ratio measured in the same process at the same moment does
not (much), so targets are stated and checked as ratios, here and never in tests.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from textbound.oracles.tokenizers_oracle import TokenizersOracle

from ..families import Family
from ..plan.implementation import Implementation
from .stops import stop_benchmark

STOP_TARGET = 12.0  # 100,000 deltas may take at most 12x the time of 10,000 (linear cost: ~10x)


def _rate(work: Callable[[], object], seconds: float) -> float:
    """Calls of ``work`` per second, over at least ``seconds``."""
    calls, start = 0, time.perf_counter()
    while True:
        work()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def run_bench(impl: Implementation, families: list[Family], seconds: float) -> int:
    from textbound.corpora import text_files

    text = "".join(text_files().values())
    print(f"corpus: {len(text.encode('utf-8')) / 1024:.0f} KiB; impl: {impl.name}")
    print(f"{'family':<16} {'encode time vs oracle':>22} {'decode time vs oracle':>22} {'impl encode MB/s':>17}")
    for family in families:
        if not impl.provides("tokenizer"):
            break
        oracle = TokenizersOracle.from_dir(family.path)
        tokenizer = impl.Tokenizer.from_dir(family.path)
        ids = oracle.encode(text, add_special_tokens=False)
        impl_encode = _rate(lambda: tokenizer.encode(text, add_special_tokens=False), seconds)
        oracle_encode = _rate(lambda: oracle.tokenizer.encode(text, add_special_tokens=False), seconds)
        impl_decode = _rate(lambda: tokenizer.decode(ids), seconds)
        oracle_decode = _rate(lambda: oracle.decode(ids), seconds)
        megabytes = len(text.encode("utf-8")) / 1e6
        print(f"{family.name:<16} {oracle_encode / impl_encode:>21.1f}x {oracle_decode / impl_decode:>21.1f}x "
              f"{impl_encode * megabytes:>17.2f}")
    if families:
        from .tokenizers import tokenizer_bench
        # The texts whose cost differs most between tokenizers (prose, random words, one long word, code
        # and multilingual text); load time, peak memory and encode_batch; tiktoken beside tokenizers
        # where the vocabulary is byte-level.
        tokenizer_bench(families, impl, seconds)
    if impl.provides("stops"):
        short = min(stop_benchmark(impl.StopChecker, 10_000, 16, seed=0) for _ in range(3))
        long = min(stop_benchmark(impl.StopChecker, 100_000, 16, seed=0) for _ in range(3))
        verdict = "ok" if long <= STOP_TARGET * short else f"OVER the {STOP_TARGET:g}x target"
        print(f"stops: 100,000 deltas with 16 stops took {long / short:.1f}x the time of 10,000 ({verdict})")
    if not impl.missing_for("chat", "render"):
        from .chat import chat_benchmark
        chat_benchmark(impl)
    if not impl.missing_for("structured", "mask") and families:  # a schema's pattern, and its Constraint
        from .structured import structured_benchmark
        # The largest vocabulary is the one whose masks cost most (Qwen3's 151k when it is shared).
        largest = max(families, key=lambda f: TokenizersOracle.from_dir(f.path).vocab_size)
        structured_benchmark(impl, largest.path)
    return 0
