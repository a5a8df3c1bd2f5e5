"""Finding tags in streamed text while holding back as little as possible.

A tag is a fixed string (``<tool_call>``, ``[THINK]``, ``<|channel|>``...). Text before a tag is
safe to release; the tail of the text that could still grow into a tag is not. ``held_length``
is that tail: the longest suffix that is a proper prefix of some tag, exactly as a stop-string
checker holds back (impl/streaming/stops.py), so a released character is never later found to be part of a
tag.

>>> find_tag("Hi <tool_call>{", ("<tool_call>", "</tool_call>"))
(3, '<tool_call>')
>>> held_length("Hi <tool_", ("<tool_call>",))
6
>>> held_length("Hi <b>", ("<tool_call>",))
0
"""
from __future__ import annotations

from collections.abc import Sequence


def find_tag(text: str, tags: Sequence[str], start: int = 0) -> tuple[int, str] | None:
    """The earliest tag in ``text[start:]`` as (position, tag); the longest wins at one position."""
    best: tuple[int, str] | None = None
    for tag in tags:
        position = text.find(tag, start)
        if position < 0:
            continue
        if best is None or position < best[0] or (position == best[0] and len(tag) > len(best[1])):
            best = (position, tag)
    return best


def held_length(text: str, tags: Sequence[str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of one of ``tags``."""
    held = 0
    for tag in tags:
        # Candidates start with the tag's first character, within its length minus one of the end;
        # the earliest that fits is the longest for this tag.
        index = text.find(tag[:1], max(0, len(text) - len(tag) + 1)) if tag else -1
        while index >= 0 and not tag.startswith(text[index:]):
            index = text.find(tag[0], index + 1)
        if index >= 0:
            held = max(held, len(text) - index)
    return held


def tag_extends(text: str, position: int, tag: str, tags: Sequence[str]) -> bool:
    """Whether the ``tag`` found at ``position`` ends the text and could still grow into a longer tag."""
    if position + len(tag) != len(text):
        return False
    return any(len(other) > len(tag) and other.startswith(tag) for other in tags)


def next_tag(text: str, tags: Sequence[str], final: bool) -> tuple[str, str | None, str]:
    """Split ``text`` at its first tag: (text before it, the tag, text after it). Without a tag:
    (the text safe to release, None, the tail held back), nothing held when ``final``.

    >>> next_tag("a<b>c", ("<b>",), False), next_tag("a<", ("<b>",), False), next_tag("a<", ("<b>",), True)
    (('a', '<b>', 'c'), ('a', None, '<'), ('a<', None, ''))
    """
    hit = find_tag(text, tags)
    if hit is not None and (final or not tag_extends(text, hit[0], hit[1], tags)):
        position, tag = hit
        return text[:position], tag, text[position + len(tag):]
    keep = 0 if final else held_length(text, tags)
    return text[:len(text) - keep], None, text[len(text) - keep:]
