"""Zeller's delta debugging (ddmin), the core every minimizer of textbound shares: remove ever smaller
chunks of a sequence while a predicate still holds of what is left.

    >>> ddmin("a long text with x in it", lambda s: "x" in s)
    'x'
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

MAX_TRIES = 2000  # checks per minimization: enough to reach a few characters from a few KB


def ddmin(items: Sequence, still_fails: Callable[[Sequence], bool]) -> Sequence:
    """Zeller's ddmin over ``items``: the result is 1-minimal or the try budget is spent."""
    tries = 0
    granularity = 2
    while len(items) >= 2 and tries < MAX_TRIES:
        chunk = max(1, len(items) // granularity)
        removed_one = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk:]
            tries += 1
            if candidate and still_fails(candidate):
                items, granularity, removed_one = candidate, max(granularity - 1, 2), True
                break
            if tries >= MAX_TRIES:
                break
        if not removed_one:
            if chunk == 1:
                break
            granularity = min(len(items), granularity * 2)
    return items
