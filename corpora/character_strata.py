"""Character strata: every Unicode general category and every space, format and control class, each
alone and in context, as named texts that every budget checks (the quick one too), so that a bug on
one class of characters is met on every run, not only when a sample happens to draw it.

A stratum is named by its class, the code point and the context:

>>> [s.name for s in character_strata() if s.text == "ab\\u00a0cd"]
['no-break space: U+00A0 between words']
>>> character_strata()[0]
Stratum(name='ASCII whitespace: U+0020 alone', text=' ')
"""
from __future__ import annotations

import sys
import unicodedata
from functools import cache
from typing import NamedTuple

# The classes engines confuse with spaces, separators or nothing at all: Rust's char::is_whitespace,
# Python's str.isspace / str.splitlines, JavaScript's \s and String.trim, Oniguruma's \s and the
# Unicode tables each draw the line elsewhere among these.
SPECIAL_CLASSES = {
    "ASCII whitespace": " \t\n\r\x0b\x0c",
    "information separator": "\x1c\x1d\x1e\x1f",  # str.isspace and str.splitlines, not Rust's is_whitespace
    "next line": "\x85",
    "no-break space": "\xa0\u2007\u202f",
    "other space": "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u205f\u3000",
    "line or paragraph separator": "\u2028\u2029",
    "byte-order mark": "\ufeff",
    "zero-width": "\u200b\u200c\u200d\u2060\u180e",
    "soft hyphen": "\xad",
}
# Surrogates (Cs) are left out: a lone one is no text (it has no UTF-8), so no engine is given one.
GENERAL_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
                      "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn")
# A category's representatives: its first code point from each of these on (ASCII, past Latin-1, astral).
REPRESENTATIVE_STARTS = (0x0, 0x100, 0x10000)
# {c} is the character; the words around it are plain ASCII, which every vocabulary spells.
CONTEXTS = {
    "alone": "{c}",
    "repeated": "{c}{c}{c}",
    "at the start": "{c}ab",
    "at the end": "ab{c}",
    "between words": "ab{c}cd",
    "between spaces": "a {c} b",
    "between digits": "1{c}2",
    "after a newline": "a\n{c}b",
}


class Stratum(NamedTuple):
    name: str
    text: str


@cache
def _first_code_points() -> dict[tuple[str, int], str]:
    """(category, start) -> the first character of the category at or past the start (one pass)."""
    first: dict[tuple[str, int], str] = {}
    for code_point in range(sys.maxunicode + 1):
        if not 0xD800 <= code_point <= 0xDFFF:
            char = chr(code_point)
            category = unicodedata.category(char)
            for start in REPRESENTATIVE_STARTS:
                if code_point >= start:
                    first.setdefault((category, start), char)
    return first


def category_representatives(category: str) -> list[str]:
    """The first code point of ``category`` from each of REPRESENTATIVE_STARTS on (Python's tables),
    once each: ``category_representatives("Zl") == ["\\u2028"]``."""
    first = _first_code_points()
    found = [first[category, start] for start in REPRESENTATIVE_STARTS if (category, start) in first]
    return list(dict.fromkeys(found))


@cache
def character_classes() -> tuple[tuple[str, str], ...]:
    """(class name, character): the special classes first, then each general category's representatives."""
    special = [(name, char) for name, chars in SPECIAL_CLASSES.items() for char in chars]
    categories = [(f"general category {category}", char) for category in GENERAL_CATEGORIES
                  for char in category_representatives(category)]
    return tuple(special + categories)


@cache
def character_strata() -> tuple[Stratum, ...]:
    """Every character class in every context, named ``"<class>: U+XXXX <context>"``."""
    return tuple(Stratum(f"{klass}: U+{ord(char):04X} {context}", pattern.format(c=char))
                 for klass, char in character_classes() for context, pattern in CONTEXTS.items())
