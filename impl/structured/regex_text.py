"""Writing regex text: escaped literals, character classes, and digit ranges.

Every pattern written here is accepted alike by Python's ``re``, the ``regex`` package and
impl.structured.regex_syntax. Examples: ``regex_escape("a.b")`` -> ``a\\.b``;
``char_class(((48, 57), (97, 102)))`` -> ``[0-9a-f]``; ``digit_range("07", "12")`` ->
``(?:0[7-9]|1[0-2])``.
"""
from __future__ import annotations

import re

from .regex_syntax import MAX_CODE_POINT, OUTER, PYTHON, Alt, Anchor, Chars, Concat, Repeat, parse

NEVER = r"[^\s\S]"  # a class with no character: matches no string, in every engine
_META = set("\\.^$*+?{}[]|()-#&~")  # '-#&~' matter in classes, verbose mode and regex's V1 set syntax
_NAMED = {"\n": r"\n", "\t": r"\t", "\r": r"\r", "\f": r"\f", "\v": r"\v"}
DECIMAL = "0123456789"
HEX_LOWER = "0123456789abcdef"


def _char(code: int, in_class: bool) -> str:
    char = chr(code)
    if char in _NAMED:
        return _NAMED[char]
    if char in _META or (in_class and char in "[]^-"):
        return "\\" + char
    if char.isprintable() and not 0xD800 <= code <= 0xDFFF:
        return char
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def regex_escape(text: str) -> str:
    """A pattern matching exactly ``text``.

    >>> regex_escape("a.b*")
    'a\\\\.b\\\\*'
    """
    if not isinstance(text, str):
        raise TypeError(f"regex_escape takes a str, not {type(text).__name__}")
    return "".join(_char(ord(c), in_class=False) for c in text)


def char_class(ranges) -> str:
    """One character from ``ranges`` (sorted, disjoint (lo, hi) code points)."""
    ranges = tuple(ranges)
    if not ranges:
        return NEVER
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0], in_class=False)
    if ranges == ((0, MAX_CODE_POINT),):
        return r"[\s\S]"
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_char(lo, True))
        elif hi == lo + 1:
            parts.append(_char(lo, True) + _char(hi, True))
        else:
            parts.append(f"{_char(lo, True)}-{_char(hi, True)}")
    return "[" + "".join(parts) + "]"


def group(alternatives) -> str:
    """``(?:a|b)``, or the single alternative alone, or NEVER for none (duplicates dropped)."""
    unique = list(dict.fromkeys(alternatives))
    if not unique:
        return NEVER
    return unique[0] if len(unique) == 1 and _is_atom(unique[0]) else "(?:" + "|".join(unique) + ")"


def _is_atom(pattern: str) -> bool:
    """True when ``pattern`` is one character or one class, so a quantifier applies to all of it.

    Conservative: a group is not recognized, and gets wrapped once more (harmless).
    """
    if len(pattern) == 1 or (len(pattern) == 2 and pattern[0] == "\\"):
        return True
    return pattern.startswith("[") and pattern.endswith("]") and pattern.count("]") == 1 + pattern.count("\\]")


def optional(pattern: str) -> str:
    return f"(?:{pattern})?" if pattern else ""


def repeat(pattern: str, low: int, high: int | None) -> str:
    """``pattern{low,high}`` (high None: unbounded), written as its shortest form."""
    atom = pattern if _is_atom(pattern) else f"(?:{pattern})"
    if high is not None and high == 0:
        return ""
    if (low, high) == (0, None):
        return atom + "*"
    if (low, high) == (1, None):
        return atom + "+"
    if (low, high) == (0, 1):
        return atom + "?"
    if (low, high) == (1, 1):
        return pattern
    if high is None:
        return f"{atom}{{{low},}}"
    return f"{atom}{{{low}}}" if low == high else f"{atom}{{{low},{high}}}"


def _digit_class(alphabet: str, first: int, last: int) -> str:
    codes = sorted(ord(alphabet[i]) for i in range(first, last + 1))
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return char_class(tuple((lo, hi) for lo, hi in runs))


def digit_range(low: str, high: str, alphabet: str = DECIMAL) -> str:
    """Strings of ``len(low)`` digits of ``alphabet`` between ``low`` and ``high`` (same length)."""
    if len(low) != len(high):
        raise ValueError("digit_range takes bounds of one length")
    if not low:
        return ""
    first, last = alphabet.index(low[0]), alphabet.index(high[0])
    rest = len(low) - 1
    smallest, largest = alphabet[0] * rest, alphabet[-1] * rest
    if first == last:
        return low[0] + digit_range(low[1:], high[1:], alphabet)
    if low[1:] == smallest and high[1:] == largest:
        return _digit_class(alphabet, first, last) + repeat(_digit_class(alphabet, 0, len(alphabet) - 1), rest, rest)
    parts = [low[0] + digit_range(low[1:], largest, alphabet)]
    if first + 1 <= last - 1:
        parts.append(_digit_class(alphabet, first + 1, last - 1)
                     + repeat(_digit_class(alphabet, 0, len(alphabet) - 1), rest, rest))
    parts.append(high[0] + digit_range(smallest, high[1:], alphabet))
    return group(parts)


def natural_range(low: int, high: int | None) -> str:
    """Decimal numerals without leading zeros for low..high (high None: unbounded); 0 <= low.

    ``natural_range(0, 15)`` -> ``(?:[0-9]|1[0-5])``; ``natural_range(10, None)`` -> ``[1-9][0-9]+``.
    """
    if high is not None and high < low:
        return NEVER
    parts, width = [], len(str(low))
    last_width = len(str(high)) if high is not None else width
    for size in range(width, last_width + 1):
        band_low = max(low, 10 ** (size - 1) if size > 1 else 0)
        band_high = 10 ** size - 1 if high is None else min(high, 10 ** size - 1)
        if band_low <= band_high:
            parts.append(digit_range(str(band_low), str(band_high)))
    if high is None:
        parts.append("[1-9]" + repeat("[0-9]", width, None))
    return group(parts)


def node_regex(node, end: str = r"\Z") -> str:
    """Python ``re`` text for a parsed regex node, ``$`` written as ``end`` (``\\Z``: the end only;
    ``$``: Python's, also before a final newline). ``node_regex(parse("\\\\d", INNER))`` -> ``[0-9]``."""
    if isinstance(node, Chars):
        return char_class(node.ranges)
    if isinstance(node, Anchor):
        return "^" if node.kind == "^" else end
    if isinstance(node, Concat):
        return "".join(f"(?:{node_regex(item, end)})" for item in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(node_regex(item, end) for item in node.items) + ")"
    return repeat(f"(?:{node_regex(node.item, end)})", node.min, node.max)


def searches(pattern, text: str, reading: str) -> bool:
    """Whether a JSON Schema ``pattern`` occurs in ``text`` under ``reading`` (regex_syntax's INNER: under
    both ECMA-262 and Python ``re``; OUTER: under either). ValueError where it does not parse.

    ``searches("^\\\\w$", "é", INNER)`` -> False (ECMA-262's ``\\w`` is ASCII); with OUTER -> True.
    """
    if reading == PYTHON:
        return re.search(pattern, text) is not None
    return re.search(node_regex(parse(pattern, reading), "$" if reading == OUTER else r"\Z"), text) is not None
