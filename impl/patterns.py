"""Patterns in tokenizer.json: ``{"String": s}`` (a literal) or ``{"Regex": r}`` (an Oniguruma regex).

Normalizers (Replace), pre-tokenizers (Split) and decoders (Replace) all take one; compiling and
matching them in one place keeps the Oniguruma-to-`regex` translation in one place too.

Two things separate a `regex` pattern from the Oniguruma one inside the oracle:

- Unicode tables. `regex` knows Unicode 18.0, Oniguruma 16.0: ~17,800 code points (U+11DCF among
  them) are letters or digits to one and unassigned to the other. ``unicode_class`` rebuilds a
  property class as an older Unicode version saw it, from the age table in impl.unicode_age, and
  the pre-tokenizers use it too for the oracle's other engines (Rust's std, unicode_categories).
- Syntax. Oniguruma's ``^``/``$`` are line anchors, ``(?m)`` means dot-all, ``\\w``/``\\h``/``[:punct:]``
  mean other sets, ``(?i)`` in mid-group scopes over the rest of the group's alternatives, and
  ``a{1,3}+`` is a repeated interval, not a possessive one. ``OnigurumaTranslation`` rewrites these.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator

import regex

from . import unicode_age
from .errors import TokenizerFileError, child

ONIGURUMA_UNICODE = unicode_age.ORACLE_UNICODE["oniguruma"]

# Oniguruma's ^ and $ match at every line start and end, as MULTILINE makes them do; V1 gives
# scoped inline flags and nested sets, which the translation builds classes with.
FLAGS = regex.V1 | regex.MULTILINE

# Unassigned in every Unicode version so far: how a class treats it is how it treats a code point
# its Unicode version had not assigned yet.
UNASSIGNED_PROBE = "\u0378"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@functools.cache
def assigned_after(version: str) -> str:
    """Every code point first assigned after Unicode ``version``, as one string."""
    return "".join(
        chr(cp)
        for assigned_in, runs in unicode_age.ASSIGNED_IN.items() if _version_key(assigned_in) > _version_key(version)
        for first, last in runs for cp in range(first, last + 1)
    )


def _set_of(code_points: set[int]) -> str:
    runs: list[list[int]] = []
    for cp in sorted(code_points):
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return "[" + "".join(f"\\U{first:08X}-\\U{last:08X}" for first, last in runs) + "]"


@functools.cache
def unicode_class(item: str, version: str) -> str:
    """A `regex` V1 set that matches what the class ``item`` (``\\p{L}``, ``\\P{Lu}``...) matched in
    Unicode ``version``: code points assigned since are taken as unassigned, and the few whose
    properties changed since as they were (impl.unicode_age.PROPERTY_CHANGES)."""
    pattern = regex.compile(item, FLAGS)
    takes_unassigned = pattern.match(UNASSIGNED_PROBE) is not None
    newer = {ord(c) for c in pattern.findall(assigned_after(version))}
    if takes_unassigned:
        added, removed = {ord(c) for c in assigned_after(version)} - newer, set()
    else:
        added, removed = set(), newer
    for cp, twin, changed_in in unicode_age.PROPERTY_CHANGES:
        if _version_key(changed_in) > _version_key(version):
            was, is_now = pattern.match(chr(twin)) is not None, pattern.match(chr(cp)) is not None
            if was and not is_now:
                added.add(cp)
            elif is_now and not was:
                removed.add(cp)
    if not added and not removed:
        return item if item.startswith("[") else f"[{item}]"
    return "[" + item + (_set_of(added) if added else "") + (f"--{_set_of(removed)}" if removed else "") + "]"


def union(*sets: str) -> str:
    """One V1 set of everything in ``sets`` (each a set or a class escape)."""
    return "[" + "".join(sets) + "]"


def complement(set_: str) -> str:
    return f"[^{set_}]"


# -- Oniguruma's character classes, as the oracle's Oniguruma (Unicode 16.0) sees them -----------

def onig_property(name: str, in_brackets: bool = True) -> str:
    """``\\p{name}`` in Oniguruma. Oniguruma ignores case, spaces, ``_`` and ``-`` in names."""
    key = regex.sub(r"[ _-]", "", name).lower()
    if key == "word":
        return onig_word(in_brackets)
    if key == "xdigit":  # only ASCII hex digits, where regex's XDigit takes every Nd
        return "[0-9A-Fa-f]"
    if not regex.fullmatch(r"[A-Za-z0-9 _-]+", name):
        raise regex.error(f"invalid character property name {{{name}}}")
    return unicode_class(f"\\p{{{name}}}", ONIGURUMA_UNICODE)


def onig_word(in_brackets: bool) -> str:
    # Measured over every code point: Oniguruma's \w is Alphabetic, marks, decimal digits and
    # connectors -- not the joiners U+200C/U+200D that regex's \w adds. Outside brackets (\w, \W,
    # \p{Word}, \b) it also takes the Latin-1 superscripts and vulgar fractions.
    word = union(*(onig_property(name) for name in ("Alpha", "M", "Nd", "Pc")))
    return word if in_brackets else union(word, r"\xB2\xB3\xB9\xBC-\xBE")


# [:name:] inside a bracket: Oniguruma's meanings where regex's POSIX classes differ.
POSIX_PROPERTY = {"alnum": "Alnum", "alpha": "Alpha", "ascii": "ASCII", "blank": "Blank", "cntrl": "Cntrl",
                  "digit": "Nd", "graph": "Graph", "lower": "Lower", "print": "Print", "space": "Space",
                  "upper": "Upper", "xdigit": "XDigit", "word": "Word"}


def onig_posix(name: str) -> str | None:
    if name == "punct":  # Oniguruma: punctuation and symbols
        return union(onig_property("P"), onig_property("S"))
    return onig_property(POSIX_PROPERTY[name]) if name in POSIX_PROPERTY else None


# One-letter class escapes: the property each stands for (upper case: its complement).
ONIG_CLASS_ESCAPES = {"w": "Word", "s": "White_Space", "d": "Nd", "h": "XDigit"}

# Escapes outside brackets that regex spells otherwise or lacks.
ONIG_ANCHORS = {
    "z": r"\Z",  # regex's \Z is Oniguruma's \z: the very end
    "Z": r"(?=\n?\Z)",  # Oniguruma's \Z: the end, or before a final newline
    "e": r"\x1B",
    "N": r"[^\n]",
    "O": r"(?s:.)",
}


class OnigurumaTranslation:
    """One left-to-right pass over an Oniguruma pattern, writing the `regex` pattern (compiled with
    FLAGS) that matches the same text."""

    INTERVAL = regex.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")
    INLINE_OPTIONS = regex.compile(r"\(\?([imx]*)(?:-([imx]*))?([:)])")
    OTHER_OPTIONS = regex.compile(r"\(\?[A-Za-z-]*[:)]")
    POSIX_BRACKET = regex.compile(r"\[:(\^?)([a-z]+):\]")
    ESCAPE = regex.compile(
        r"\\(?:(?P<property>[pP])\{(?P<caret>\^?)(?P<name>[^}]*)\}"
        r"|x\{(?P<hex>[0-9A-Fa-f]{1,8})\}|o\{(?P<octal>[0-7]{1,11})\}|c(?P<control>.)"
        r"|k<(?P<backreference>\w+)>|g<(?P<call>[-+]?\w+)>|(?P<verbatim>x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|[0-7]{1,3})"
        r"|(?P<letter>.))", regex.DOTALL)

    def __init__(self, source: str):
        self.source = source
        self.pos = 0
        self.out: list[str] = []
        self.bracket_depth = 0
        # One entry per open group (the whole pattern first): where it starts in out, and how many
        # groups an inline option opened inside it that must close with it.
        self.groups: list[list[int]] = [[0, 0]]
        self.atom = 0  # where in out the last complete atom starts, for a quantifier to wrap
        self.ignore_case_seen = False

    def translate(self) -> str:
        while self.pos < len(self.source):
            if self.bracket_depth:
                self._in_brackets()
            else:
                self._outside_brackets()
        self.out.append(")" * self.groups[0][1])
        if self.ignore_case_seen:
            # A never-matching alternative: it turns off regex's search for a case-folded literal
            # prefix, which misses full case folding ("(?i:ss)" skips "ß" there; it should not).
            self.out.append("|(?!)")
        return "".join(self.out)

    def _emit(self, text: str, consumed: int, atom: bool = False) -> None:
        if atom:
            self.atom = len(self.out)
        self.out.append(text)
        self.pos += consumed

    def _outside_brackets(self) -> None:
        char = self.source[self.pos]
        if char == "\\":
            self._escape(in_brackets=False)
        elif char == "[":
            self.atom = len(self.out)
            self._open_bracket()
        elif char == "(":
            self._open_group()
        elif char == ")" and len(self.groups) > 1:
            start, inline_groups = self.groups.pop()
            self.atom = start
            self._emit(")" * (1 + inline_groups), 1)
        elif char == "{" and (interval := self.INTERVAL.match(self.source, self.pos)):
            self._interval(interval.group())
        else:
            self._emit(char, 1, atom=char not in "*+?|^$")

    def _interval(self, interval: str) -> None:
        # Oniguruma reads "a{1,3}+" as (a{1,3})+, where regex would read a possessive interval.
        if self.source.startswith("+", self.pos + len(interval)):
            self.out.insert(self.atom, "(?:")
            self._emit(interval + ")", len(interval))
        else:
            self._emit(interval, len(interval))

    def _open_group(self) -> None:
        options = self.INLINE_OPTIONS.match(self.source, self.pos)
        if options is None:
            if self.OTHER_OPTIONS.match(self.source, self.pos):
                raise regex.error("undefined group option")
            self.groups.append([len(self.out), 0])
            self._emit("(", 1)
            return
        on, off, end = options.groups()
        self.ignore_case_seen |= "i" in on
        # Oniguruma's (?m) is regex's (?s): dot matches newline.
        spelled = "(?" + on.replace("m", "s") + (f"-{off.replace('m', 's')}" if off is not None else "") + ":"
        if end == ":":
            self.groups.append([len(self.out), 0])
        else:  # (?i) in mid-group: the rest of the group, all its alternatives, becomes the scope
            self.groups[-1][1] += 1
        self._emit(spelled, options.end() - self.pos)

    def _open_bracket(self) -> None:
        self.bracket_depth += 1
        self._emit("[", 1)
        if self.source.startswith("^", self.pos):
            self._emit("^", 1)
        if self.source.startswith("]", self.pos):  # a leading ] is a literal
            self._emit(r"\]", 1)

    def _in_brackets(self) -> None:
        char = self.source[self.pos]
        if char == "\\":
            self._escape(in_brackets=True)
        elif char == "[" and (posix := self.POSIX_BRACKET.match(self.source, self.pos)):
            set_ = onig_posix(posix.group(2))
            if set_ is None:
                raise regex.error(f"invalid POSIX bracket type [:{posix.group(2)}:]")
            self._emit(complement(set_) if posix.group(1) else set_, posix.end() - self.pos)
        elif char == "[":
            self._open_bracket()
        elif char == "]":
            self.bracket_depth -= 1
            self._emit("]", 1)
        elif char in "-|~" and self.source.startswith(char, self.pos + 1):
            # regex V1 reads --, || and ~~ as set operators; to Oniguruma they are two characters.
            self._emit(char + "\\" + char, 2)
        else:
            self._emit(char, 1)

    def _class(self, set_: str, negated: bool, in_brackets: bool) -> str:
        set_ = complement(set_) if negated else set_
        # Under (?i), Oniguruma case-folds a class in brackets but not a bare \p{Lu}; regex folds both.
        return set_ if in_brackets or not self.ignore_case_seen else f"(?-i:{set_})"

    def _escape(self, in_brackets: bool) -> None:
        escape = self.ESCAPE.match(self.source, self.pos)
        if escape is None:
            raise regex.error("pattern ends with a backslash")
        consumed, letter = escape.end() - self.pos, escape["letter"]
        if escape["property"]:
            set_ = onig_property(escape["name"], in_brackets)
            negated = (escape["property"] == "P") != bool(escape["caret"])
            self._emit(self._class(set_, negated, in_brackets), consumed, atom=True)
        elif escape["hex"] or escape["octal"]:
            cp = int(escape["hex"], 16) if escape["hex"] else int(escape["octal"], 8)
            self._emit(f"\\U{cp:08X}", consumed, atom=True)
        elif escape["control"]:
            self._emit(f"\\x{ord(escape['control']) & 0x1F:02X}", consumed, atom=True)
        elif escape["backreference"]:
            self._emit(f"\\g<{escape['backreference']}>", consumed, atom=True)
        elif escape["call"]:
            # Oniguruma's \g<name> runs the group's pattern again (regex's (?&name)); regex's own
            # \g<name> would be a backreference, matching only the same text.
            call = escape["call"]
            self._emit(f"(?{call})" if call.lstrip("+-").isdigit() else f"(?&{call})", consumed, atom=True)
        elif escape["verbatim"]:
            self._emit(escape.group(), consumed, atom=True)
        elif letter.lower() in ONIG_CLASS_ESCAPES:
            set_ = onig_property(ONIG_CLASS_ESCAPES[letter.lower()], in_brackets)
            self._emit(self._class(set_, letter.isupper(), in_brackets), consumed, atom=True)
        elif not in_brackets and letter in "bB":
            word = onig_word(in_brackets=False)
            boundary = f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            self._emit(boundary if letter == "b" else f"(?!{boundary})", consumed)
        elif not in_brackets and letter in ONIG_ANCHORS:
            self._emit(ONIG_ANCHORS[letter], consumed, atom=letter not in "zZ")
        else:
            self._emit("\\" + letter, consumed, atom=True)


def compile_oniguruma(source: str) -> "regex.Pattern[str]":
    """The `regex` pattern matching what Oniguruma matches with ``source``; raises regex.error."""
    return regex.compile(OnigurumaTranslation(source).translate(), FLAGS)


def compile_pattern(node: object, where: str) -> "regex.Pattern[str]":
    """The compiled pattern of a ``{"String": ...}`` or ``{"Regex": ...}`` node."""
    if not isinstance(node, dict) or len(node) != 1:
        raise TokenizerFileError(where, 'expected a pattern: {"String": ...} or {"Regex": ...}')
    (kind, source), = node.items()
    if not isinstance(source, str):
        raise TokenizerFileError(child(where, kind), f"expected a string, found {type(source).__name__}")
    if kind == "String":
        return regex.compile(regex.escape(source), FLAGS)
    if kind == "Regex":
        try:
            return compile_oniguruma(source)
        except regex.error as exc:
            raise TokenizerFileError(child(where, kind), f"invalid regex {source!r}: {exc}") from None
    raise TokenizerFileError(where, f"unknown pattern kind {kind!r} (expected String or Regex)")


def match_spans(pattern: "regex.Pattern[str]", text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each match, as Oniguruma's find_iter in the oracle yields them.

    Unlike Python's finditer, an empty match right where the previous match ended is skipped
    (``x*`` in ``"axx"`` matches at 0 and 1..3 only, not again at 3), and an empty text has none.
    Until the first empty match the two agree (each searches on from where the last match ended),
    so finditer runs until then and a search per match only after.
    """
    if not text:
        return
    previous_end = None
    for match in pattern.finditer(text):
        start, end = match.span()
        if start == end:
            yield from _spans_searched(pattern, text, previous_end)
            return
        yield start, end
        previous_end = end


def _spans_searched(pattern: "regex.Pattern[str]", text: str, previous_end: int | None) -> Iterator[tuple[int, int]]:
    """match_spans from ``previous_end`` (where the last match ended; None for the start) on."""
    position = previous_end or 0
    while position <= len(text):
        match = pattern.search(text, position)
        if match is None:
            return
        start, end = match.span()
        if start == end == previous_end:
            position += 1
            continue
        yield start, end
        position = previous_end = end


def literal_of(node: object) -> str | None:
    """The text of a ``{"String": ...}`` pattern node, which matches as str.find would; else None."""
    if isinstance(node, dict) and len(node) == 1 and isinstance(node.get("String"), str):
        return node["String"]
    return None


def find_matches(pattern: "regex.Pattern[str]", text: str) -> list[tuple[int, int, bool]]:
    """``text`` cut into (start, end, is_match) segments, in order and covering it all."""
    segments, previous = [], 0
    for start, end in match_spans(pattern, text):
        if start != previous:
            segments.append((previous, start, False))
        segments.append((start, end, True))
        previous = end
    if previous != len(text):
        segments.append((previous, len(text), False))
    return segments


# The Rust regex crate's \w (Unicode's UTS #18 word class) and \s, at the crate's Unicode version:
# the Whitespace pre-tokenizer and added tokens' single_word, lstrip and rstrip use them.
_RUST_REGEX_UNICODE = unicode_age.ORACLE_UNICODE["rust_regex"]
RUST_REGEX_WORD = union(*(unicode_class(item, _RUST_REGEX_UNICODE)
                          for item in (r"\p{Alpha}", r"\p{M}", r"\p{Nd}", r"\p{Pc}", r"\p{Join_Control}")))
RUST_REGEX_SPACE = unicode_class(r"\p{White_Space}", _RUST_REGEX_UNICODE)
