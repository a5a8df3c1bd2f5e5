"""A parser for the regex subset that impl generates and that tool schemas use, into a small AST.

Supported (with Python ``re`` semantics on ``str`` patterns): literals; escapes ``\\n \\t \\r \\f \\v
\\a \\0 \\xHH \\uHHHH \\UHHHHHHHH`` and escaped punctuation; ``.`` (any character but a newline);
classes ``[...]`` with ranges, negation and ``\\d \\w \\s \\D \\W \\S`` (Unicode, as ``re`` has them);
groups ``(...)``, ``(?:...)``, ``(?P<name>...)``; alternation; quantifiers ``? * + {m} {m,} {m,n}``
(lazy ``?`` suffixes accepted: the language is the same). ``^`` and ``$`` parse into ``Anchor``
nodes that the caller places or rejects. Anything else (backreferences, lookaround, flags, possessive
quantifiers, ``\\b``...) raises ValueError naming it and its index.

``parse(pattern, reading=INNER)`` reads a JSON Schema ``pattern``, which ECMA-262 defines and jsonschema
runs with Python's ``re``, as the characters BOTH readings match (a sound subset under either):
``\\d`` is ``[0-9]``, ``\\w`` ``[A-Za-z0-9_]``, ``\\s`` the whitespace both know, ``.`` no line
terminator of either; escapes whose meaning differs (``\\a``, ``\\U``, ``{,n}``) are refused.
``reading=OUTER`` is what EITHER reading matches (a superset: which ``patternProperties`` may apply).
Inside a negated class each item is read the other way, so the class stays a subset (or a superset).

Example: ``parse("a[0-9]{2,3}")`` ->
``Concat((Chars(((97, 97),)), Repeat(Chars(((48, 57),)), 2, 3)))``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAX_CODE_POINT = 0x10FFFF
MAX_REPEAT = 100_000  # a bound on {m,n} so that a typo cannot ask for an automaton of billions of states
PYTHON, INNER, OUTER = "python", "inner", "outer"  # how a pattern is read: see the module notes


# -- AST -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Chars:
    """One character from a set of code points: sorted, disjoint, non-adjacent (lo, hi) ranges."""
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Concat:
    items: tuple


@dataclass(frozen=True)
class Alt:
    items: tuple


@dataclass(frozen=True)
class Repeat:
    item: object
    min: int
    max: int | None  # None: unbounded


@dataclass(frozen=True)
class Anchor:
    kind: str  # "^" or "$"
    index: int


# -- character sets ------------------------------------------------------------------------------

def normalize_ranges(ranges) -> tuple[tuple[int, int], ...]:
    """Sorted, merged ranges: ``[(5, 9), (0, 5), (11, 12)]`` -> ``((0, 9), (11, 12))``."""
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def complement(ranges) -> tuple[tuple[int, int], ...]:
    """Every code point not in ``ranges``: ``((1, 0x10FFFF),)`` -> ``((0, 0),)``."""
    result, next_free = [], 0
    for lo, hi in normalize_ranges(ranges):
        if lo > next_free:
            result.append((next_free, lo - 1))
        next_free = hi + 1
    if next_free <= MAX_CODE_POINT:
        result.append((next_free, MAX_CODE_POINT))
    return tuple(result)


def subtract(ranges, removed) -> tuple[tuple[int, int], ...]:
    """``ranges`` without the code points of ``removed``."""
    keep = complement(removed)
    result = []
    for lo, hi in normalize_ranges(ranges):
        for klo, khi in keep:
            if klo <= hi and khi >= lo:
                result.append((max(lo, klo), min(hi, khi)))
    return normalize_ranges(result)


@lru_cache(maxsize=None)
def unicode_class(letter: str) -> tuple[tuple[int, int], ...]:
    """The code points Python's ``re`` matches with ``\\d``, ``\\w`` or ``\\s`` (and their negations)."""
    if letter.isupper():
        return complement(unicode_class(letter.lower()))
    every_character = "".join(map(chr, range(MAX_CODE_POINT + 1)))
    return tuple((m.start(), m.end() - 1) for m in re.finditer(f"\\{letter}+", every_character))


# ECMA-262's class escapes and line terminators (Python's come from ``re`` itself, ``unicode_class``).
_ECMA_CLASSES = {
    "d": ((0x30, 0x39),),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "s": ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
          (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)),
}
_ECMA_LINE_TERMINATORS = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))


def class_escape(letter: str, reading: str) -> tuple[tuple[int, int], ...]:
    """``\\d``-style class ``letter`` under ``reading``: Python's, both readings' (INNER) or either's (OUTER).

    ``class_escape("d", INNER)`` -> ``((48, 57),)``; ``class_escape("D", INNER)`` excludes every Unicode digit.
    """
    if reading == PYTHON:
        return unicode_class(letter)
    if letter.isupper():
        return complement(class_escape(letter.lower(), OUTER if reading == INNER else INNER))
    python, ecma = unicode_class(letter), _ECMA_CLASSES[letter]
    if reading == OUTER:
        return normalize_ranges(python + ecma)
    return subtract(python, complement(ecma))


# A counted repeat "{m}", "{m,}", "{m,n}" (matched in place: slicing the rest of a long pattern at
# every brace would make parsing quadratic).
_COUNTED = re.compile(r"\{(\d*)(,(\d*))?\}")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "0": "\0"}
_CLASS_ESCAPES = "dwsDWS"
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_PYTHON_ONLY_ESCAPES = {"a": "\\a (a bell in Python, the letter a in ECMA-262)",
                         "U": "\\U (a code point in Python, the letter U in ECMA-262)"}
_UNSUPPORTED_ESCAPES = {"b": "word boundary \\b", "B": "\\B", "A": "\\A", "Z": "\\Z", "z": "\\z", "G": "\\G",
                        "N": "named character \\N", "p": "property class \\p", "P": "property class \\P"}


class _Parser:
    def __init__(self, pattern: str, reading: str):
        if not isinstance(pattern, str):
            raise ValueError(f"a regex pattern must be a str, not {type(pattern).__name__}")
        self.pattern = pattern
        self.reading = reading
        self.at = 0

    def fail(self, what: str, index: int | None = None):
        index = self.at if index is None else index
        raise ValueError(f"regex {self.pattern!r}: {what} at index {index} is not supported")

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.pattern[index] if index < len(self.pattern) else ""

    def take(self) -> str:
        if self.at >= len(self.pattern):
            raise ValueError(f"regex {self.pattern!r}: unexpected end of pattern")
        char = self.pattern[self.at]
        self.at += 1
        return char

    # alternation := concat ('|' concat)*
    def alternation(self):
        branches = [self.concatenation()]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def concatenation(self):
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(self.atom()))
        return items[0] if len(items) == 1 else Concat(tuple(items))

    def quantified(self, node):
        while True:
            start, char = self.at, self.peek()
            if char in ("?", "*", "+"):
                self.at += 1
                low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[char]
            elif char == "{" and _COUNTED.match(self.pattern, self.at):
                match = _COUNTED.match(self.pattern, self.at)
                if not match.group(1) and not match.group(2):
                    return node  # "{}" is a literal in Python's re
                if not match.group(1) and self.reading != PYTHON:
                    self.fail("{,n} (a repeat in Python, literal text in ECMA-262)", start)
                low = int(match.group(1) or 0)
                high = low if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
                if high is not None and high < low:
                    raise ValueError(f"regex {self.pattern!r}: repeat {{{low},{high}}} at index {start} "
                                     f"has max below min")
                if max(low, high or 0) > MAX_REPEAT:
                    self.fail(f"repeat count above {MAX_REPEAT}", start)
                self.at = match.end()
            else:
                return node
            if isinstance(node, Anchor):
                self.fail(f"quantified anchor {node.kind}", start)
            if self.peek() == "?":
                self.at += 1  # lazy: same language
            elif self.peek() == "+":
                self.fail("possessive quantifier")
            node = Repeat(node, low, high)

    def atom(self):
        start, char = self.at, self.take()
        if char == "(":
            return self.group(start)
        if char == "[":
            return Chars(self.char_class(start))
        if char == ".":
            return Chars(complement(((10, 10),) if self.reading in (PYTHON, OUTER) else _ECMA_LINE_TERMINATORS))
        if char in ("^", "$"):
            return Anchor(char, start)
        if char == "\\":
            return Chars(self.escape(in_class=False))
        if char in ("*", "+", "?"):
            self.fail(f"nothing to repeat before {char!r}", start)
        if char == "{" and _COUNTED.match(self.pattern, start):
            self.fail("nothing to repeat before '{'", start)
        return Chars(((ord(char), ord(char)),))

    def group(self, start: int):
        if self.peek() == "?":
            if self.pattern.startswith("?:", self.at):
                self.at += 2
            elif self.pattern.startswith("?P<", self.at):
                close = self.pattern.find(">", self.at)
                if close < 0 or not self.pattern[self.at + 3:close].isidentifier():
                    self.fail("malformed group name", start)
                self.at = close + 1
            else:
                construct = {"?=": "lookahead", "?!": "negative lookahead", "?<=": "lookbehind",
                             "?<!": "negative lookbehind", "?P=": "backreference", "?#": "comment",
                             "?>": "atomic group", "?(": "conditional"}
                for prefix, name in sorted(construct.items(), key=lambda kv: -len(kv[0])):
                    if self.pattern.startswith(prefix, self.at):
                        self.fail(name, start)
                self.fail("inline flags", start)
        node = self.alternation()
        if self.peek() != ")":
            raise ValueError(f"regex {self.pattern!r}: group opened at index {start} is not closed")
        self.at += 1
        return node

    def escape(self, in_class: bool) -> tuple[tuple[int, int], ...]:
        start, char = self.at - 1, self.take()
        if char in _CLASS_ESCAPES:
            return class_escape(char, self.reading)
        if char in _PYTHON_ONLY_ESCAPES and self.reading != PYTHON:
            self.fail(_PYTHON_ONLY_ESCAPES[char], start)
        if char in _SIMPLE_ESCAPES:
            if char == "0" and self.peek().isdigit():
                self.fail("octal escape", start)
            code = ord(_SIMPLE_ESCAPES[char])
        elif char == "b" and in_class:
            code = 8
        elif char in _HEX_ESCAPES:
            digits = self.pattern[self.at:self.at + _HEX_ESCAPES[char]]
            if len(digits) != _HEX_ESCAPES[char] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError(f"regex {self.pattern!r}: bad \\{char} escape at index {start}")
            self.at += len(digits)
            code = int(digits, 16)
            if code > MAX_CODE_POINT:
                raise ValueError(f"regex {self.pattern!r}: \\{char}{digits} at index {start} is beyond U+10FFFF")
        elif char.isdigit():
            self.fail("backreference", start)
        elif char in _UNSUPPORTED_ESCAPES:
            self.fail(_UNSUPPORTED_ESCAPES[char], start)
        elif char.isascii() and char.isalnum():
            raise ValueError(f"regex {self.pattern!r}: bad escape \\{char} at index {start}")
        else:
            code = ord(char)
        return ((code, code),)

    def char_class(self, start: int) -> tuple[tuple[int, int], ...]:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        outer_reading = self.reading
        if negated and self.reading != PYTHON:  # the complement of a subset is a superset, and back
            self.reading = OUTER if self.reading == INNER else INNER
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.at >= len(self.pattern):
                raise ValueError(f"regex {self.pattern!r}: class opened at index {start} is not closed")
            char = self.peek()
            if char == "]" and not first:
                self.at += 1
                break
            if char == "[" and self.peek(1) in (":", "=", "."):
                self.fail("POSIX class or nested set")
            first = False
            low = self.class_item()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                high = self.class_item()
                if len(low) != 1 or len(high) != 1 or low[0][0] != low[0][1] or high[0][0] != high[0][1]:
                    self.fail("range with a class escape as an end")
                if high[0][0] < low[0][0]:
                    raise ValueError(f"regex {self.pattern!r}: reversed range in class at index {start}")
                ranges.append((low[0][0], high[0][0]))
            else:
                ranges.extend(low)
        self.reading = outer_reading
        ranges = normalize_ranges(ranges)
        return complement(ranges) if negated else ranges

    def class_item(self) -> tuple[tuple[int, int], ...]:
        char = self.take()
        if char == "\\":
            return self.escape(in_class=True)
        return ((ord(char), ord(char)),)


def parse(pattern: str, reading: str = PYTHON):
    """The AST of ``pattern`` read as ``reading`` (see the module notes); ValueError naming what is
    unsupported and where."""
    parser = _Parser(pattern, reading)
    node = parser.alternation()
    if parser.at != len(pattern):
        raise ValueError(f"regex {pattern!r}: unbalanced ')' at index {parser.at}")
    return node
