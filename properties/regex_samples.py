"""Random full matches of a regex, drawn from its syntax tree: the texts a sound-property test validates.

Hypothesis's ``from_regex`` goes through Python's ``re`` parser and chokes on the very large patterns
real-world schemas compile to (hundreds of megabytes); walking impl's own parse of the pattern is
linear in it, and walking a ``SharedPattern`` (properties/shared_patterns.py) parses every shared
piece once. Draws are diverse on purpose: each alternative equally likely, an optional part present
three times in four, a bounded repeat at one of its ends one time in four; past ``SAMPLE_BUDGET``
characters every repeat takes its minimum and every choice its shortest alternative, so a draw ends.
Every draw is checked against Python's ``re`` by the caller that needs certainty.

Example: ``sample_matches("a[0-9]{2}|b", random.Random(0), 3)`` -> ``['a37', 'b', 'a05']`` (for some seed).
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from hypothesis import strategies as st

from textbound.impl.structured.regex_syntax import Alt, Chars, Concat, Repeat, parse

from .shared_patterns import TOKEN_MARK, SharedPattern, piece_id
from .strategies import draw_examples

EXTRA_REPEATS = 3  # an unbounded or wide repeat runs at most this many times past its minimum
END_REPEATS = 64  # a bounded repeat this much wider than its minimum is not drawn at its maximum
SAMPLE_BUDGET = 20_000  # characters: past this a draw closes as shortly as it can
SAMPLERS_KEPT = 64  # parsed patterns kept per process (a schema's, a format's)
_RECURSION = 50_000  # nesting of groups a draw may walk through (pieces nest pieces)
_MARK = ((ord(TOKEN_MARK), ord(TOKEN_MARK)),)


@dataclass(frozen=True)
class Piece:
    """A shared piece of a SharedPattern, by number, standing where its token is."""
    index: int


def _with_pieces(node):
    """``node`` with every token (the mark and the piece's number, in one concatenation) as a Piece."""
    if isinstance(node, Chars):
        if node.ranges == _MARK:
            raise ValueError("a token of a shared pattern is not in place (split or quantified)")
        return node
    if isinstance(node, Alt):
        return Alt(tuple(_with_pieces(item) for item in node.items))
    if isinstance(node, Repeat):
        return Repeat(_with_pieces(node.item), node.min, node.max)
    if isinstance(node, Concat):
        items, at = [], 0
        while at < len(node.items):
            item = node.items[at]
            if isinstance(item, Chars) and item.ranges == _MARK and at + 1 < len(node.items) \
                    and isinstance(node.items[at + 1], Chars) and len(node.items[at + 1].ranges) == 1 \
                    and node.items[at + 1].ranges[0][0] == node.items[at + 1].ranges[0][1]:
                items.append(Piece(piece_id(chr(node.items[at + 1].ranges[0][0]))))
                at += 2
                continue
            items.append(_with_pieces(item))
            at += 1
        return Concat(tuple(items))
    return node


class _Sampler:
    def __init__(self, shared: SharedPattern):
        tokens = _with_pieces if shared.pieces else (lambda node: node)  # a plain pattern has none
        self.pieces = [tokens(parse(text)) for text in shared.pieces]
        self.root = tokens(parse(shared.root))
        self._empty: dict[int, bool] = {}
        self._shortest: dict[int, int] = {}
        # Per node, computed at its first draw: a pattern's classes and alternatives are drawn from again and again.
        self._weights: dict[int, list[int]] = {}  # a class's cumulative weights
        self._choices: dict[int, list] = {}  # an alternation's items that match something

    def is_empty(self, node) -> bool:
        """True when ``node`` matches no string (memoized by node: pieces are shared)."""
        known = self._empty.get(id(node))
        if known is None:
            if isinstance(node, Chars):
                known = not node.ranges
            elif isinstance(node, Concat):
                known = any(self.is_empty(item) for item in node.items)
            elif isinstance(node, Alt):
                known = all(self.is_empty(item) for item in node.items)
            elif isinstance(node, Repeat):
                known = node.min > 0 and self.is_empty(node.item)
            elif isinstance(node, Piece):
                known = self.is_empty(self.pieces[node.index])
            else:
                known = False
            self._empty[id(node)] = known
        return known

    def shortest(self, node) -> int:
        """Characters of ``node``'s shortest match (``node`` not empty)."""
        known = self._shortest.get(id(node))
        if known is None:
            if isinstance(node, Chars):
                known = 1
            elif isinstance(node, Concat):
                known = sum(self.shortest(item) for item in node.items)
            elif isinstance(node, Alt):
                known = min(self.shortest(item) for item in node.items if not self.is_empty(item))
            elif isinstance(node, Repeat):
                known = node.min * self.shortest(node.item) if node.min else 0
            elif isinstance(node, Piece):
                known = self.shortest(self.pieces[node.index])
            else:
                known = 0
            self._shortest[id(node)] = known
        return known

    def draw(self, node, rng: random.Random, out: list[str]) -> None:
        if isinstance(node, Chars):
            if len(node.ranges) == 1:  # a literal or one range: most of a JSON pattern's characters
                lo, hi = node.ranges[0]
                out.append(chr(lo if lo == hi else rng.randint(lo, hi)))
                return
            weights = self._weights.get(id(node))
            if weights is None:
                weights = self._weights[id(node)] = list(accumulate(min(hi - lo + 1, 64) for lo, hi in node.ranges))
            lo, hi = rng.choices(node.ranges, cum_weights=weights)[0]
            out.append(chr(rng.randint(lo, hi)))
        elif isinstance(node, Concat):
            for item in node.items:
                self.draw(item, rng, out)
        elif isinstance(node, Alt):
            choices = self._choices.get(id(node))
            if choices is None:
                choices = self._choices[id(node)] = [item for item in node.items if not self.is_empty(item)]
            if len(out) > SAMPLE_BUDGET:
                choices = [min(choices, key=self.shortest)]
            self.draw(rng.choice(choices), rng, out)
        elif isinstance(node, Repeat):
            for _ in range(self._count(node, rng, len(out) > SAMPLE_BUDGET)):
                self.draw(node.item, rng, out)
        elif isinstance(node, Piece):
            self.draw(self.pieces[node.index], rng, out)

    def _count(self, node: Repeat, rng: random.Random, closing: bool) -> int:
        if closing or self.is_empty(node.item):
            return node.min
        if (node.min, node.max) == (0, 1):
            return int(rng.random() < 0.75)
        if node.max is not None and node.max - node.min <= END_REPEATS and rng.random() < 0.25:
            return rng.choice((node.min, node.max))
        top = node.min + EXTRA_REPEATS if node.max is None else min(node.max, node.min + EXTRA_REPEATS)
        return rng.randint(node.min, top)


    def samples(self, rng: random.Random, count: int) -> list[str]:
        """``count`` random full matches; none where the pattern matches no string."""
        if self.is_empty(self.root):
            return []
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _RECURSION))
        try:
            samples = []
            for _ in range(count):
                out: list[str] = []
                self.draw(self.root, rng, out)
                samples.append("".join(out))
            return samples
        finally:
            sys.setrecursionlimit(limit)


# A parse kept for the next call: a schema's pattern keyword or a format's is drawn from once per instance.
_kept_sampler = lru_cache(maxsize=SAMPLERS_KEPT)(_Sampler)


def sample_shared(shared: SharedPattern, rng: random.Random, count: int) -> list[str]:
    """``count`` random strings the pattern ``shared`` stands for fully matches; none where it matches
    no string (a schema with no instance admits nothing: vacuously sound)."""
    return _Sampler(shared).samples(rng, count)


def pattern_texts(pattern: str, rng: random.Random, count: int, kept: bool = False) -> list[str]:
    """Up to ``count`` distinct random full matches of ``pattern``, none where it matches nothing:
    drawn from impl's parse of it, or by Hypothesis's ``from_regex`` (which reads all of Python's
    syntax) where impl's parser refuses it (another implementation's pattern, a schema's lookahead).
    ``kept``: the parse is kept for later calls (a pattern drawn from once is parsed for this call only).

    ``pattern_texts("a{2,3}", random.Random(0), 5)`` -> ``['aaa', 'aa']``."""
    try:
        sampler = (_kept_sampler if kept else _Sampler)(SharedPattern(pattern, ()))
    except ValueError:
        drawn = draw_examples(st.from_regex(pattern, fullmatch=True), count, rng.randrange(2**32))
    else:
        drawn = sampler.samples(rng, count)
    return list(dict.fromkeys(drawn))


def sample_matches(pattern: str, rng: random.Random, count: int) -> list[str]:
    """``count`` random strings ``pattern`` fully matches (it must match some string)."""
    samples = sample_shared(SharedPattern(pattern, ()), rng, count)
    if count and not samples:
        raise ValueError("the pattern matches no string")
    return samples
