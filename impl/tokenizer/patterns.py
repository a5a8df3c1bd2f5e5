"""Patterns in tokenizer.json: ``{"String": s}`` (a literal) or ``{"Regex": r}`` (an Oniguruma regex).

Normalizers (Replace), pre-tokenizers (Split) and decoders (Replace) all take one; compiling and
matching them in one place keeps the Oniguruma-to-`regex` translation in one place too.

Two things separate a `regex` pattern from the Oniguruma one inside the oracle:

- Unicode tables. `regex` knows Unicode 18.0, Oniguruma 16.0: ~17,800 code points (U+11DCF among
  them) are letters or digits to one and unassigned to the other. ``unicode_class`` rebuilds a
  property class as an older Unicode version saw it, from the age table in impl.tokenizer.unicode_age, and
  the pre-tokenizers use it too for the oracle's other engines (Rust's std, unicode_categories).
- Syntax. Oniguruma's ``^``/``$`` are line anchors, ``(?m)`` means dot-all, ``\\w``/``\\h``/``[:punct:]``
  mean other sets, ``(?i)`` in mid-group scopes over the rest of the group's alternatives, and
  ``a{1,3}+`` is a repeated interval, not a possessive one. ``OnigurumaTranslation`` rewrites these,
  and spells out what `regex` lacks: the grapheme boundaries ``\\y``/``\\Y`` (UAX #29 rules as
  look-arounds over Oniguruma's tables), the absent operators ``(?~...)`` (each character consumed
  under the limit guarded), and the options (?WDSP) (ASCII classes), (?C), (?I), ``(?i-i)``.

The tokenizer.json syntax is ONIG_SYNTAX_ONIGURUMA (Oniguruma's default, which the onig crate's
``Regex::new`` takes). What it has and `regex` cannot match exactly -- (?L), word segments
(?y{w}), look-arounds and multi-character atoms under an absent limit -- raises Untranslatable,
which compile_pattern turns into a TokenizerFileError naming the pattern.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import regex

from ..errors import TokenizerFileError
from . import unicode_age
from .fields import child

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
    properties changed since as they were (impl.tokenizer.unicode_age.PROPERTY_CHANGES)."""
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
    corrected = "[" + item + (_set_of(added) if added else "") + (f"--{_set_of(removed)}" if removed else "") + "]"
    # The same set with its ASCII members tried first: `regex` tries a union's members in order, and
    # a set difference costs about 3.5 times a plain property on every character tested.
    ascii_members = {cp for cp in range(128) if pattern.match(chr(cp))} - removed | (added & set(range(128)))
    return f"[{_set_of(ascii_members)}||{corrected}]" if ascii_members else corrected


def union(*sets: str) -> str:
    """One V1 set of everything in ``sets`` (each a set or a class escape)."""
    return "[" + "".join(sets) + "]"


def complement(set_: str) -> str:
    return f"[^{set_}]"


# -- Oniguruma's character classes, as the oracle's Oniguruma (Unicode 16.0) sees them -----------

def property_key(name: str) -> str:
    """A property name as Oniguruma looks it up: it ignores case, spaces, ``_`` and ``-``."""
    return regex.sub(r"[ _-]", "", name).lower()


@functools.cache
def onig_table(item: str) -> str:
    """The class ``item`` (``\\p{name}``) as Oniguruma's tables have it: unicode_class at its
    Unicode version, then the members that rule gets wrong, measured on the oracle
    (impl.tokenizer.unicode_age.ONIGURUMA_CORRECTIONS: ``\\p{Extended_Pictographic}`` holds unassigned code
    points, and ``\\p{Diacritic}`` took in old ones since)."""
    set_ = unicode_class(item, ONIGURUMA_UNICODE)
    key = property_key(item[3:-1])
    correction = unicode_age.ONIGURUMA_CORRECTIONS.get(unicode_age.ONIGURUMA_CORRECTION_ALIASES.get(key, key))
    if correction is None:
        return set_
    added, removed = ({cp for first, last in runs for cp in range(first, last + 1)} for runs in correction)
    return "[" + set_ + (_set_of(added) if added else "") + (f"--{_set_of(removed)}" if removed else "") + "]"


def onig_property(name: str, in_brackets: bool = True) -> str:
    """``\\p{name}`` in Oniguruma."""
    key = property_key(name)
    if key == "word":
        return onig_word(in_brackets)
    if key == "xdigit":  # only ASCII hex digits, where regex's XDigit takes every Nd
        return "[0-9A-Fa-f]"
    if not regex.fullmatch(r"[A-Za-z0-9 _-]+", name):
        raise regex.error(f"invalid character property name {{{name}}}")
    return onig_table(f"\\p{{{name}}}")


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


class Untranslatable(ValueError):
    """A valid Oniguruma construct that no `regex` pattern matches exactly: impl refuses it."""


# Option letters whose classes turn ASCII-only, and the classes (POSIX names) each one restricts:
# (?W) \w, \p{Word}, [[:word:]] and \b; (?D) the digits; (?S) the spaces; (?P) all of them and
# every other POSIX class -- except \p{Punct}, which the oracle leaves Unicode.
ASCII_OPTIONS = {"W": {"word"}, "D": {"digit"}, "S": {"space"},
                 "P": {"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space",
                       "upper", "xdigit", "word"}}
# Oniguruma's letters that are regex inline flags; m (dot matches newline) is regex's s.
REGEX_FLAGS = {"i": "i", "m": "s", "x": "x"}
WORD_SEGMENTS = "y{w}"  # the option that makes \X, \y and \Y mean words, not grapheme clusters


def ascii_only(set_: str) -> str:
    return f"[{set_}&&\\x00-\\x7F]"


def _gcb(value: str) -> str:
    return onig_table(f"\\p{{Grapheme_Cluster_Break={value}}}")


@functools.cache
def grapheme_cluster_continues() -> str:
    """A `regex` assertion true where no extended grapheme cluster boundary is (Oniguruma's \\Y).

    Oniguruma's rules (src/unicode.c, onigenc_egcb_is_break_position) are UAX #29's of Unicode 15.0:
    GB3-GB13 without GB9c's Indic conjuncts, each a pair of lookarounds here. The start and the end
    of the text are boundaries (GB1, GB2): every pair below needs a character on both sides.
    Example: between "e" and U+0301 (Extend, GB9) it holds; between "a" and "b" it does not.
    """
    control = union(_gcb("Control"), _gcb("CR"), _gcb("LF"))
    hangul_l, hangul_v, hangul_t, hangul_lv, hangul_lvt = map(_gcb, ("L", "V", "T", "LV", "LVT"))
    extend, zwj, ri = _gcb("Extend"), _gcb("ZWJ"), _gcb("Regional_Indicator")
    pictographic = onig_property("Extended_Pictographic")
    rules = (
        r"(?<=\r)(?=\n)",  # GB3
        f"(?<={hangul_l})(?={union(hangul_l, hangul_v, hangul_lv, hangul_lvt)})",  # GB6
        f"(?<={union(hangul_lv, hangul_v)})(?={union(hangul_v, hangul_t)})",  # GB7
        f"(?<={union(hangul_lvt, hangul_t)})(?={hangul_t})",  # GB8
        f"(?<=[^{control}])(?={union(extend, zwj, _gcb('SpacingMark'))})",  # GB9, GB9a after GB4
        f"(?<={_gcb('Prepend')})(?=[^{control}])",  # GB9b before GB5
        f"(?<={pictographic}{extend}*{zwj})(?={pictographic})",  # GB11
        f"(?<=(?<!{ri})(?:{ri}{ri})*{ri})(?={ri})",  # GB12, GB13: an odd run of RIs before
    )
    return "(?:" + "|".join(rules) + ")"


@dataclasses.dataclass
class _Group:
    """An open group: where it starts in the output, how many regex groups its isolated options
    opened (they close with it), the Oniguruma options in force inside it, and what kind it is
    ("" for any other group, "absent" for (?~absent), "absent|" for (?~|...) before or after its |)."""
    start: int
    options: frozenset[str]
    kind: str = ""
    inline_groups: int = 0
    absent: str | None = None  # of an absent expression, once its | is read: the absent's translation


class OnigurumaTranslation:
    """One left-to-right pass over an Oniguruma pattern, writing the `regex` pattern (compiled with
    FLAGS) that matches the same text.

    The absent operators limit how far what follows them may match: the text they match may not
    reach past the first place where <absent> matches. Each character consumed under that limit is
    guarded by ``(?!absent)``: ``(?~|345|\\d*)`` becomes ``(?:(?!345)\\d)*``, "12" in "12345".
    """

    INTERVAL = regex.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")
    OPTION = regex.compile(r"[imxWDSP-]|y\{[gw]\}|[CIL]")
    # How a group opens: capturing, (?:, atomic, look-around or named (the rest is regex's error).
    GROUP_OPENER = regex.compile(r"\((?:\?(?:[:>=!]|<[=!]|<\w+>|'\w+'))?")
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
        self.bracket_start = 0  # where in out the outermost open bracket starts
        self.groups = [_Group(0, frozenset())]  # the whole pattern first
        self.atom = 0  # where in out the last complete atom starts, for a quantifier to wrap
        self.ignore_case_seen = False
        self.capture_unnamed = True  # (?C) turns it off
        self.ascii_case_fold = False  # (?I)
        self.guard: str | None = None  # the absent that limits what is consumed now, if any

    @property
    def options(self) -> frozenset[str]:
        return self.groups[-1].options

    def translate(self) -> str:
        while self.pos < len(self.source):
            if self.bracket_depth:
                self._in_brackets()
            else:
                self._outside_brackets()
        if len(self.groups) > 1:
            raise regex.error("end pattern with unmatched parenthesis")
        self.out.append(")" * self.groups[0].inline_groups)
        if self.ignore_case_seen:
            if self.ascii_case_fold:  # (?I): only ASCII letters fold, as under regex's ASCII flag
                self.out.insert(0, "(?a)")
            # A never-matching alternative: it turns off regex's search for a case-folded literal
            # prefix, which misses full case folding ("(?i:ss)" skips "ß" there; it should not).
            self.out.append("|(?!)")
        return "".join(self.out)

    def _emit(self, text: str, consumed: int, atom: bool = False) -> None:
        if atom:
            self.atom = len(self.out)
        self.out.append(text)
        self.pos += consumed

    def _consume(self, text: str, consumed: int) -> None:
        """Emit an atom that matches one character, guarded when an absent operator limits it."""
        self._emit(f"(?:{self.guard}{text})" if self.guard else text, consumed, atom=True)

    def _unlimited(self, construct: str) -> None:
        """Refuse ``construct`` where an absent operator limits the range: what it matches (several
        characters, or text beyond the limit) cannot be guarded one character at a time."""
        if self.guard or any(group.kind.startswith("absent") for group in self.groups):
            raise Untranslatable(f"{construct} inside or after an absent operator (?~...)")

    def _outside_brackets(self) -> None:
        char = self.source[self.pos]
        if char == "\\":
            self._escape(in_brackets=False)
        elif char == "[":
            self.atom = self.bracket_start = len(self.out)
            self._open_bracket()
        elif char == "(":
            self._open_group()
        elif char == ")" and len(self.groups) > 1:
            self._close_group()
        elif char == "|" and self.groups[-1].kind == "absent|" and self.groups[-1].absent is None:
            self._absent_read(self.groups[-1])
        elif char == "{" and (interval := self.INTERVAL.match(self.source, self.pos)):
            self._interval(interval.group())
        elif char == "|" and len(self.groups) == 1:
            self.guard = None  # an absent stopper limits only its own alternative
            self._emit(char, 1)
        elif char in "*+?|^$":
            self._emit(char, 1)
        else:
            self._consume(char, 1)

    def _interval(self, interval: str) -> None:
        # Oniguruma reads "a{1,3}+" as (a{1,3})+, where regex would read a possessive interval.
        if self.source.startswith("+", self.pos + len(interval)):
            self.out.insert(self.atom, "(?:")
            self._emit(interval + ")", len(interval))
        else:
            self._emit(interval, len(interval))

    def _open_group(self) -> None:
        rest = self.source[self.pos + 1:self.pos + 3]
        opener = self.GROUP_OPENER.match(self.source, self.pos)
        if rest[:1] == "?" and (rest[1:].isascii() and rest[1:].isalpha() or rest[1:] == "-"):
            self._options()
        elif rest == "?~":
            self._open_absent()
        elif rest == "?#":  # a comment, to the next )
            end = self.source.find(")", self.pos)
            if end < 0:
                raise regex.error("end pattern in group")
            self.pos = end + 1
        else:
            opener = opener.group()
            if opener[2:3] in ("=", "!") or opener[2:4] in ("<=", "<!"):
                self._unlimited("a look-around")
            self.groups.append(_Group(len(self.out), self.options))
            spelled = f"(?<{opener[3:-1]}>" if opener.startswith("(?'") else opener  # regex lacks (?'name'
            self._emit("(?:" if opener == "(" and not self.capture_unnamed else spelled, len(opener))

    def _options(self) -> None:
        """(?imxWDSP-imxWDSP) for the rest of the group, (?imx...:subexp) for subexp, and the whole
        options (?CIL) at the very start, as Oniguruma's parser reads them (prs_bag_open)."""
        on, negate, whole, position = set(self.options), False, set(), self.pos + 2
        while position < len(self.source) and self.source[position] not in ":)":
            letter = self.OPTION.match(self.source, position)
            if letter is None or negate and letter.group()[0] in "yCIL":
                raise regex.error("undefined group option" if letter is None or letter.group()[0] == "y"
                                  else "invalid group option")
            letter, position = letter.group(), letter.end()
            if letter == "-":
                negate = True
            elif letter in "CIL":
                whole.add(letter)
            elif letter.startswith("y"):
                on.discard(WORD_SEGMENTS)
                on |= {letter} - {"y{g}"}
            else:
                (on.discard if negate else on.add)(letter)
        if position == len(self.source):
            raise regex.error("end pattern in group")
        end = self.source[position]
        if whole:
            self._whole_options(whole, end)
        self.ignore_case_seen |= "i" in on
        flags_on = "".join(REGEX_FLAGS[letter] for letter in "imx" if letter in on)
        flags_off = "".join(REGEX_FLAGS[letter] for letter in "imx" if letter not in on)
        spelled = f"(?{flags_on}" + (f"-{flags_off}" if flags_off else "") + ":"
        if end == ")" and self.groups[-1].kind.startswith("absent"):
            raise Untranslatable("an isolated option inside an absent operator (?~...)")
        if end == ":":
            self.groups.append(_Group(len(self.out), frozenset(on)))
        else:  # (?i) in mid-group: the rest of the group, all its alternatives, becomes the scope
            self.groups[-1].inline_groups += 1
            self.groups[-1].options = frozenset(on)
        self._emit(spelled, position + 1 - self.pos)

    def _whole_options(self, letters: set[str], end: str) -> None:
        if self.pos != 0:  # Oniguruma takes them once, where they reach the whole pattern
            raise regex.error("invalid group option")
        if "L" in letters or end == ":":
            raise Untranslatable("(?L) (find the longest match) and (?C:...)-style whole options; "
                                 "a regex search cannot choose among matches the way they do")
        self.capture_unnamed = "C" not in letters
        self.ascii_case_fold = "I" in letters

    def _open_absent(self) -> None:
        if self.source.startswith("(?~|)", self.pos):  # the range clear: no limit from here on
            if self.guard and len(self.groups) > 1:
                raise Untranslatable("a range clear (?~|) inside a group: the limit it lifts holds again "
                                     "after the group along only some paths")
            self.guard = None
            self.pos += 5
            return
        self._unlimited("a nested absent operator")
        opener = "(?~|" if self.source.startswith("(?~|", self.pos) else "(?~"
        self.groups.append(_Group(len(self.out), self.options, "absent" + opener[3:]))
        self._emit("", len(opener))

    def _absent_read(self, group: _Group) -> None:
        """The | after (?~|absent: what follows is the expression the absent limits."""
        group.absent = "".join(self.out[group.start:])
        del self.out[group.start:]
        self.guard = f"(?!{group.absent})"
        self._emit("(?:", 1)

    def _close_group(self) -> None:
        group = self.groups.pop()
        self.atom = group.start
        if group.kind == "absent":  # (?~absent): \O* limited by absent
            absent = "".join(self.out[group.start:])
            del self.out[group.start:]
            self._emit(f"(?:(?!{absent})(?s:.))*", 1)
        elif group.kind == "absent|" and group.absent is not None:  # (?~|absent|exp)
            self.guard = None
            self._emit(")" * (1 + group.inline_groups), 1)
        elif group.kind == "absent|":  # (?~|absent), a stopper: it limits the rest of its alternative
            if len(self.groups) > 1:
                raise Untranslatable("an absent stopper (?~|absent) inside a group: its limit outlives "
                                     "the group along only some paths")
            self.guard = f"(?!{''.join(self.out[group.start:])})"
            del self.out[group.start:]
            self.pos += 1
        else:
            self._emit(")" * (1 + group.inline_groups), 1)

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
            set_ = self._ascii_if_set(posix.group(2), set_)
            self._emit(complement(set_) if posix.group(1) else set_, posix.end() - self.pos)
        elif char == "[":
            self._open_bracket()
        elif char == "]":
            self.bracket_depth -= 1
            self._emit("]", 1)
            if not self.bracket_depth:
                bracket = "".join(self.out[self.bracket_start:])
                del self.out[self.bracket_start:]
                self._consume(bracket, 0)
        elif char in "-|~" and self.source.startswith(char, self.pos + 1):
            # regex V1 reads --, || and ~~ as set operators; to Oniguruma they are two characters.
            self._emit(char + "\\" + char, 2)
        else:
            self._emit(char, 1)

    def _ascii_if_set(self, posix_name: str, set_: str) -> str:
        """``set_`` cut to ASCII when an option in force ((?W), (?D), (?S), (?P)) says so."""
        restricted = any(posix_name in ASCII_OPTIONS[letter] for letter in ASCII_OPTIONS.keys() & self.options)
        return ascii_only(set_) if restricted else set_

    def _class(self, set_: str, negated: bool, in_brackets: bool) -> str:
        set_ = complement(set_) if negated else set_
        # Under (?i), Oniguruma case-folds a class in brackets but not a bare \p{Lu}; regex folds both.
        return set_ if in_brackets or not self.ignore_case_seen else f"(?-i:{set_})"

    def _class_escape(self, text: str, consumed: int, in_brackets: bool) -> None:
        if in_brackets:
            self._emit(text, consumed)
        else:
            self._consume(text, consumed)

    def _text_segment(self, letter: str) -> str:
        if WORD_SEGMENTS in self.options:
            raise Untranslatable(f"\\{letter} under (?y{{w}}): word segmentation (UAX #29 words) has no "
                                 "`regex` equivalent at Oniguruma's Unicode version")
        continues = grapheme_cluster_continues()
        if letter == "y":
            return f"(?!{continues})"
        if letter == "Y":
            return continues
        self._unlimited("\\X")
        return f"(?>(?s:.)(?:{continues}(?s:.))*)"  # Oniguruma's definition: (?>\O(?:\Y\O)*)

    def _escape(self, in_brackets: bool) -> None:
        escape = self.ESCAPE.match(self.source, self.pos)
        if escape is None:
            raise regex.error("pattern ends with a backslash")
        consumed, letter = escape.end() - self.pos, escape["letter"]
        if escape["property"]:
            name = escape["name"]
            key = property_key(name)
            set_ = self._ascii_if_set("" if key == "punct" else key, onig_property(name, in_brackets))
            negated = (escape["property"] == "P") != bool(escape["caret"])
            self._class_escape(self._class(set_, negated, in_brackets), consumed, in_brackets)
        elif escape["hex"] or escape["octal"]:
            cp = int(escape["hex"], 16) if escape["hex"] else int(escape["octal"], 8)
            self._class_escape(f"\\U{cp:08X}", consumed, in_brackets)
        elif escape["control"]:
            self._class_escape(f"\\x{ord(escape['control']) & 0x1F:02X}", consumed, in_brackets)
        elif escape["backreference"]:
            self._unlimited("a backreference")
            self._emit(f"\\g<{escape['backreference']}>", consumed, atom=True)
        elif escape["call"]:
            self._unlimited("a subexpression call")
            # Oniguruma's \g<name> runs the group's pattern again (regex's (?&name)); regex's own
            # \g<name> would be a backreference, matching only the same text.
            call = escape["call"]
            self._emit(f"(?{call})" if call.lstrip("+-").isdigit() else f"(?&{call})", consumed, atom=True)
        elif escape["verbatim"]:
            if escape["verbatim"][0] in "123456789" and not in_brackets:
                self._unlimited("a backreference")
            self._class_escape(escape.group(), consumed, in_brackets)
        elif letter.lower() in ONIG_CLASS_ESCAPES:
            name = ONIG_CLASS_ESCAPES[letter.lower()]
            set_ = onig_property(name, in_brackets)
            set_ = self._ascii_if_set({"w": "word", "d": "digit", "s": "space"}.get(letter.lower(), ""), set_)
            self._class_escape(self._class(set_, letter.isupper(), in_brackets), consumed, in_brackets)
        elif not in_brackets and letter in "bB":
            word = self._ascii_if_set("word", onig_word(in_brackets=False))
            boundary = f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            self._emit(boundary if letter == "b" else f"(?!{boundary})", consumed)
        elif not in_brackets and letter in "yYX":
            self._emit(self._text_segment(letter), consumed, atom=letter == "X")
        elif not in_brackets and letter in ONIG_ANCHORS:
            if letter in "eNO":
                self._consume(ONIG_ANCHORS[letter], consumed)
            else:
                self._emit(ONIG_ANCHORS[letter], consumed, atom=letter not in "zZ")
        elif not in_brackets and letter in "RK":
            self._unlimited(f"\\{letter}")
            self._emit("\\" + letter, consumed, atom=True)
        elif not in_brackets and letter in "AGz":
            self._emit("\\" + letter, consumed)
        else:
            self._class_escape("\\" + letter, consumed, in_brackets)


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
        except Untranslatable as exc:
            raise TokenizerFileError(child(where, kind), f"unsupported Oniguruma construct in {source!r}: {exc}"
                                     ) from None
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
