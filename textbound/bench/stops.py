"""Throughput benchmark for streaming stop-string checkers.

A checker's cost per delta must not grow with the length of the stream; comparing the time for
10x more deltas (expect about 10x the time) shows whether it does.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Protocol


class StreamingStopChecker(Protocol):
    stopped: bool

    def add(self, delta: str) -> str: ...

    def finish(self) -> str: ...


def stop_benchmark(
    checker_factory: Callable[[Iterable[str]], StreamingStopChecker],
    n_deltas: int,
    n_stops: int,
    seed: int,
) -> float:
    """Seconds to stream ``n_deltas`` short deltas through ``checker_factory(stops)``.

    The text uses only "a" and "b" and every stop is an "a"/"b" word followed by "c", so partial
    matches keep starting and breaking (the held tail is often several characters long) yet no
    stop ever completes, and the whole stream is measured.
    """
    rng = random.Random(seed)
    stops = ["".join(rng.choices("ab", k=rng.randint(3, 12))) + "c" for _ in range(n_stops)]
    deltas = ["".join(rng.choices("ab", k=rng.randint(1, 4))) for _ in range(n_deltas)]
    checker = checker_factory(stops)
    start = time.perf_counter()
    for delta in deltas:
        checker.add(delta)
    checker.finish()
    elapsed = time.perf_counter() - start
    if checker.stopped:
        raise RuntimeError("benchmark checker stopped on a stream that contains no stop string")
    return elapsed
