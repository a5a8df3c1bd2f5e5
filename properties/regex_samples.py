"""Random full matches of a regex, drawn from its syntax tree: the texts a sound-property test validates.

Hypothesis's ``from_regex`` goes through Python's ``re`` parser and chokes on the very large patterns
real-world schemas compile to (hundreds of kilobytes); walking impl's own parse of the pattern is
linear in it. Every draw is checked against Python's ``re`` by the caller that needs certainty.

Example: ``sample_matches("a[0-9]{2}|b", random.Random(0), 3)`` -> ``['a37', 'b', 'a05']`` (for some seed).
"""
from __future__ import annotations

import random

from impl.structured.automaton import is_empty_language
from impl.structured.regex_syntax import Alt, Chars, Concat, Repeat, parse

EXTRA_REPEATS = 3  # an unbounded or wide repeat runs at most this many times past its minimum


def _draw(node, rng: random.Random, out: list[str]) -> None:
    if isinstance(node, Chars):
        weights = [hi - lo + 1 for lo, hi in node.ranges]
        lo, hi = rng.choices(node.ranges, weights=[min(w, 64) for w in weights])[0]
        out.append(chr(rng.randint(lo, hi)))
    elif isinstance(node, Concat):
        for item in node.items:
            _draw(item, rng, out)
    elif isinstance(node, Alt):
        _draw(rng.choice([item for item in node.items if not is_empty_language(item)]), rng, out)
    elif isinstance(node, Repeat):
        top = node.min + EXTRA_REPEATS if node.max is None else min(node.max, node.min + EXTRA_REPEATS)
        if is_empty_language(node.item):
            top = node.min
        for _ in range(rng.randint(node.min, top)):
            _draw(node.item, rng, out)


def sample_matches(pattern: str, rng: random.Random, count: int) -> list[str]:
    """``count`` random strings ``pattern`` fully matches (it must match some string)."""
    node = parse(pattern)
    if is_empty_language(node):
        raise ValueError("the pattern matches no string")
    samples = []
    for _ in range(count):
        out: list[str] = []
        _draw(node, rng, out)
        samples.append("".join(out))
    return samples
