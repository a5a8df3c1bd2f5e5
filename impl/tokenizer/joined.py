"""Pieces carried as one joined text and the end of each in it, as the batched fast paths pass them
(one string and one list rather than a string per piece, so that most work runs in C)."""
from __future__ import annotations

from itertools import accumulate


def pieces_of(text: str, ends: list[int]) -> list[str]:
    """The pieces ``text`` holds one after another, each ending at its entry of ``ends`` (cut in C).

    >>> pieces_of("abc", [2, 2, 3])
    ['ab', '', 'c']
    """
    return list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def joined(pieces: list[str]) -> tuple[str, list[int]]:
    """``pieces`` as one text and the end of each in it: ``["ab", "c"]`` -> ``("abc", [2, 3])``."""
    return "".join(pieces), list(accumulate(map(len, pieces)))
