"""The bounded cache of a piece's ids that BPE, Unigram and the fast split share.

A model answers a piece it has seen from the cache (``"Hello"`` -> ``[15496]`` once, then without
merging); a full cache is emptied rather than grown, so memory stays bounded on endless new words.
"""
from __future__ import annotations

from itertools import islice

CACHE_CAPACITY = 10_000  # as HF's DEFAULT_CACHE_CAPACITY
CACHE_MAX_PIECE_LENGTH = 256  # longer pieces are rare and would bloat the cache


def remember(cache: dict, piece: str, ids) -> None:
    """Keep a short piece's ids in ``cache``; a full cache is emptied first, so that its memory
    stays bounded and it follows what the text now holds (a run of new words fills it once,
    and the words that come back refill it).

    >>> cache = {}; remember(cache, "Hi", [1]); cache
    {'Hi': [1]}
    """
    if len(piece) < CACHE_MAX_PIECE_LENGTH:
        if len(cache) >= CACHE_CAPACITY:
            cache.clear()
        cache[piece] = ids


def remember_all(cache: dict, fresh: dict) -> None:
    """``remember`` each piece of ``fresh`` at once: the short ones are added in one update, the
    cache emptied first when they would overflow it, and at most CACHE_CAPACITY of them kept.

    >>> cache = {"Hi": [1]}; remember_all(cache, {"yo": [2], "x" * 300: [3]}); cache
    {'Hi': [1], 'yo': [2]}
    """
    if max(map(len, fresh), default=0) >= CACHE_MAX_PIECE_LENGTH:
        fresh = {piece: ids for piece, ids in fresh.items() if len(piece) < CACHE_MAX_PIECE_LENGTH}
    if len(cache) + len(fresh) > CACHE_CAPACITY:
        cache.clear()
        if len(fresh) > CACHE_CAPACITY:
            fresh = dict(islice(fresh.items(), CACHE_CAPACITY))
    cache.update(fresh)
