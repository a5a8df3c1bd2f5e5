"""Pre-tokenizers: cut normalized text into the pieces the model tokenizes one by one.

Every pre-tokenizer is a rule for cutting one piece; the oracle (tokenizers/src/pre_tokenizers)
applies it to each piece in turn and drops the empty ones. Most cut where a pattern matches and
then keep, drop or attach the matched part as a SplitDelimiterBehavior says.

The character classes come from textbound.impl.tokenizer.patterns.unicode_class at the Unicode version of the engine
the oracle asks: Rust's std for whitespace and digits, the unicode_categories crate for
punctuation, the regex crate for Whitespace's words, Oniguruma for Split and ByteLevel.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from typing import NamedTuple

import regex

from ..errors import TokenizerFileError
from .byte_level import bytes_to_chars
from .fields import (
    ByteLevelOptions, MetaspaceOptions, build_component, build_components, char_field, child, defaulted,
    field, optional,
)
from .joined import joined, pieces_of
from .patterns import (
    FLAGS,
    assigned_after,
    RUST_REGEX_SPACE,
    RUST_REGEX_WORD,
    compile_oniguruma,
    compile_pattern,
    find_matches,
    unicode_class,
    union,
)
from .unicode_age import ORACLE_UNICODE

RUST_STD = ORACLE_UNICODE["rust_std"]

# char::is_whitespace and char::is_numeric (Rust's std).
WHITESPACE_PATTERN = regex.compile(unicode_class(r"\p{White_Space}", RUST_STD), FLAGS)
NUMERIC = regex.compile(unicode_class(r"\p{N}", RUST_STD), FLAGS)
# char::is_ascii_punctuation (ASCII symbols too) or the unicode_categories crate's is_punctuation.
PUNCTUATION = regex.compile(
    union(r"!-/:-@\[-`{-~", unicode_class(r"\p{P}", ORACLE_UNICODE["unicode_categories"])), FLAGS)

# PUNCTUATION in a group, for cut_isolated.
PUNCTUATION_ALONE = regex.compile(f"({PUNCTUATION.pattern})", FLAGS)

# Whitespace's \w+|[^\w\s]+ in the regex crate.
WORDS_OR_SYMBOLS = regex.compile(f"{RUST_REGEX_WORD}+|[^{RUST_REGEX_WORD}{RUST_REGEX_SPACE}]+", FLAGS)

# GPT-2's split, which ByteLevel applies when use_regex is set (an Oniguruma regex).
GPT2_SPLIT = compile_oniguruma(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")


class Piece(NamedTuple):
    """One split of the text moving through pre-tokenization.

    ``at_start`` is True when the piece begins at offset 0 of the original input, which Metaspace's
    prepend_scheme "first" asks. When a piece is cut, only a sub-piece starting where it started
    keeps it.
    """

    text: str
    at_start: bool


# Piece(text, at_start) of a (text, at_start) pair, built in C (a NamedTuple's own __new__ runs Python).
_new_piece = functools.partial(tuple.__new__, Piece)

Span = tuple[int, int]
Segment = tuple[int, int, bool]  # (start, end, is_match)
Behavior = Callable[[list[Segment]], list[Span]]


def _merge_runs(segments: list[Segment], joins: Callable[[bool, bool], bool]) -> list[Span]:
    """Spans from segments, each joined to the span before it when ``joins(previous, current)``."""
    spans: list[list[int]] = []
    previous_match = False
    for start, end, is_match in segments:
        if spans and joins(previous_match, is_match):
            spans[-1][1] = end
        else:
            spans.append([start, end])
        previous_match = is_match
    return [(start, end) for start, end in spans]


def _removed(segments: list[Segment]) -> list[Span]:
    return [(start, end) for start, end, is_match in segments if not is_match]


def _isolated(segments: list[Segment]) -> list[Span]:
    return [(start, end) for start, end, _ in segments]


def _merged_with_previous(segments: list[Segment]) -> list[Span]:
    return _merge_runs(segments, lambda previous, current: current and not previous)


def _merged_with_next(segments: list[Segment]) -> list[Span]:
    # The oracle folds from the end: a match joins the segment after it unless that one matched too.
    mirrored = [(-end, -start, is_match) for start, end, is_match in reversed(segments)]
    return [(-end, -start) for start, end in reversed(_merged_with_previous(mirrored))]


def _contiguous(segments: list[Segment]) -> list[Span]:
    return _merge_runs(segments, lambda previous, current: current == previous)


# SplitDelimiterBehavior: what becomes of the matched parts when a piece is cut.
BEHAVIORS: dict[str, Behavior] = {
    "Removed": _removed,
    "Isolated": _isolated,
    "MergedWithPrevious": _merged_with_previous,
    "MergedWithNext": _merged_with_next,
    "Contiguous": _contiguous,
}


def _behavior(node: dict, key: str, where: str, default: str | None = None) -> Behavior:
    name = field(node, key, where, str) if default is None or key in node else default
    if name not in BEHAVIORS:
        raise TokenizerFileError(child(where, key),
                                 f"unknown behavior {name!r} (expected one of {', '.join(BEHAVIORS)})")
    return BEHAVIORS[name]






def cut(piece: Piece, pattern: regex.Pattern[str], behavior: Behavior, invert: bool = False) -> list[Piece]:
    """``piece`` cut where ``pattern`` matches (or, inverted, where it does not), per ``behavior``."""
    if not invert and pattern.search(piece.text) is None:
        # No match: one unmatched segment, which every behavior keeps whole (one search in C
        # instead of the segments' Python loop, as most words of a text hold no punctuation).
        return [piece] if piece.text else []
    if behavior is _removed and invert and not pattern.groups:  # the matches kept, found in C
        matches = pattern.findall(piece.text)
        if "" not in matches:  # without an empty match, findall's are match_spans'
            return _starting_with(piece, matches, pattern.match(piece.text) is not None)
    segments = find_matches(pattern, piece.text)
    if invert:
        segments = [(start, end, not is_match) for start, end, is_match in segments]
    return [Piece(piece.text[start:end], piece.at_start and start == 0) for start, end in behavior(segments)]


def cut_removed(piece: Piece, pattern: regex.Pattern[str], invert: bool = False) -> list[Piece]:
    """``cut(piece, pattern, _removed, invert)`` for a pattern without groups none of whose matches
    is empty (a class of characters, runs of them), in C: the texts between the matches (split),
    or, inverted, the matches themselves (findall). ``"a  b"`` on spaces -> ``"a"``, ``"b"``."""
    text = piece.text
    texts = pattern.findall(text) if invert else list(filter(None, pattern.split(text)))
    # The first text starts the piece when a match starts it (inverted), or none does.
    return _starting_with(piece, texts, (pattern.match(text) is None) is not invert)


def _starting_with(piece: Piece, texts: list[str], first_starts: bool) -> list[Piece]:
    """The pieces of ``texts``, cut from ``piece`` in order; ``first_starts`` says whether the
    first one begins where ``piece`` does (and so keeps its ``at_start``)."""
    pieces = list(map(_new_piece, zip(texts, repeat(False))))
    if pieces and piece.at_start and first_starts:
        pieces[0] = Piece(texts[0], True)
    return pieces


def cut_isolated(piece: Piece, grouped: regex.Pattern[str]) -> list[Piece]:
    """``cut(piece, pattern, _isolated)`` for a pattern none of whose matches is empty, given as
    ``grouped``, the pattern in one group: its split (in C) holds every segment, and the first
    that is not empty starts the piece. ``"a,b"`` on punctuation -> ``"a"``, ``","``, ``"b"``."""
    return _starting_with(piece, list(filter(None, grouped.split(piece.text))), True)


@functools.cache  # a fact of the class, asked on every pre-tokenization
def _defined_together(cls: type, *names: str) -> bool:
    """Whether one class of ``cls``'s MRO defines all of ``names`` (a subclass replacing ``split``
    alone no longer keeps what its parent's ``keeps_unmatched`` says of it)."""
    return len({next(owner for owner in cls.__mro__ if name in vars(owner)) for name in names}) == 1


class PreTokenizer:
    """Cuts each piece on its own; subclasses say how in ``split``."""

    def pre_tokenize(self, pieces: list[Piece]) -> list[Piece]:
        pattern = self.keeps_unmatched() if _defined_together(type(self), "split", "keeps_unmatched") else None
        if pattern is not None and len(pieces) == 1 and pieces[0].text:  # the common case, said shortly
            return pieces if pattern.search(pieces[0].text) is None else [
                part for part in self.split(pieces[0]) if part.text]
        texts = list(map(operator.attrgetter("text"), pieces))
        if pattern is None or not all(texts):
            return [part for piece in pieces for part in self.split(piece) if part.text]
        # The pieces the pattern matches are split; the runs of pieces between them are kept whole
        # (found by one search each, in C: most words hold no punctuation and no digit).
        kept: list[Piece] = []
        done = 0
        for at in compress(range(len(texts)), map(operator.is_not, map(pattern.search, texts), repeat(None))):
            kept += pieces[done:at]
            kept += [part for part in self.split(pieces[at]) if part.text]
            done = at + 1
        return kept + pieces[done:]

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        """A pattern such that ``split`` keeps a piece it does not match whole (None: no such pattern)."""
        return None

    def split(self, piece: Piece) -> list[Piece]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, node: dict, where: str) -> PreTokenizer:
        return cls()


class Split(PreTokenizer):
    """Cuts where a pattern matches (or, with invert, where it does not)."""

    def __init__(self, pattern: regex.Pattern[str], behavior: Behavior, invert: bool):
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert

    @classmethod
    def from_json(cls, node: dict, where: str) -> Split:
        pattern = compile_pattern(field(node, "pattern", where), child(where, "pattern"))
        return cls(pattern, _behavior(node, "behavior", where), field(node, "invert", where, bool))

    def split(self, piece: Piece) -> list[Piece]:
        return cut(piece, self.pattern, self.behavior, self.invert)

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        return None if self.invert else self.pattern


class ByteLevel(PreTokenizer):
    """GPT-2's pre-tokenizer: an optional leading space, GPT-2's split, then every UTF-8 byte
    spelled as one character of the byte-level alphabet. trim_offsets only moves offsets."""

    def __init__(self, add_prefix_space: bool, use_regex: bool):
        self.add_prefix_space = add_prefix_space
        self.use_regex = use_regex

    @classmethod
    def from_json(cls, node: dict, where: str) -> ByteLevel:
        options = ByteLevelOptions.from_json(node, where)  # trim_offsets only moves offsets
        return cls(options.add_prefix_space, options.use_regex)

    def split(self, piece: Piece) -> list[Piece]:
        if self.add_prefix_space and piece.text and not piece.text.startswith(" "):
            # The oracle's prepend inserts before the first character, so an empty text stays empty.
            piece = Piece(" " + piece.text, piece.at_start)
        parts = cut(piece, GPT2_SPLIT, _isolated) if self.use_regex else [piece]
        return [Piece(spell_bytes(part.text), part.at_start) for part in parts]


class Metaspace(PreTokenizer):
    """SentencePiece's spaces: each space becomes the replacement character, which may also be
    prepended, and the text is cut before each replacement character."""

    def __init__(self, replacement: str, prepend_scheme: str, split: bool):
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split_on_replacement = split
        # The pieces of cutting before each replacement character (MergedWithNext, as the oracle
        # does), found by findall in C: each replacement character starts one and takes everything
        # up to the next; the text may begin without one.
        escaped = regex.escape(replacement)
        self.pieces_pattern = regex.compile(f"{escaped}[^{escaped}]*|[^{escaped}]+", FLAGS)

    @classmethod
    def from_json(cls, node: dict, where: str) -> Metaspace:
        options = MetaspaceOptions.from_json(node, where)
        return cls(options.replacement, options.prepend_scheme, options.split)

    def split(self, piece: Piece) -> list[Piece]:
        text = piece.text.replace(" ", self.replacement)
        prepend = self.prepend_scheme == "always" or (self.prepend_scheme == "first" and piece.at_start)
        if prepend and text and not text.startswith(self.replacement):  # see ByteLevel on empty text
            text = self.replacement + text
        if not self.split_on_replacement:
            return [Piece(text, piece.at_start)]
        parts = self.pieces_pattern.findall(text)
        return [Piece(parts[0], piece.at_start), *map(Piece, parts[1:], repeat(False))] if parts else []


class Whitespace(PreTokenizer):
    """Keeps runs of word characters and runs of other non-space characters; drops the spaces."""

    def split(self, piece: Piece) -> list[Piece]:
        return cut_removed(piece, WORDS_OR_SYMBOLS, invert=True)


class WhitespaceSplit(PreTokenizer):
    """Cuts on whitespace, dropping it."""

    def split(self, piece: Piece) -> list[Piece]:
        return cut_removed(piece, WHITESPACE_PATTERN)

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        return WHITESPACE_PATTERN


class Punctuation(PreTokenizer):
    """Cuts at each punctuation character, which the behavior keeps, drops or attaches."""

    def __init__(self, behavior: Behavior):
        self.behavior = behavior

    @classmethod
    def from_json(cls, node: dict, where: str) -> Punctuation:
        return cls(_behavior(node, "behavior", where, default="Isolated"))

    def split(self, piece: Piece) -> list[Piece]:
        if self.behavior is _isolated:
            return cut_isolated(piece, PUNCTUATION_ALONE)
        return cut(piece, PUNCTUATION, self.behavior)

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        return PUNCTUATION


class Digits(PreTokenizer):
    """Cuts numbers from the rest: each digit alone, or each run of digits together."""

    def __init__(self, individual_digits: bool):
        self.behavior = _isolated if individual_digits else _contiguous

    @classmethod
    def from_json(cls, node: dict, where: str) -> Digits:
        return cls(field(node, "individual_digits", where, bool))

    def split(self, piece: Piece) -> list[Piece]:
        return cut(piece, NUMERIC, self.behavior)

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        return NUMERIC


class BertPreTokenizer(PreTokenizer):
    """BERT's: cuts on whitespace (dropped), then isolates each punctuation character."""

    def split(self, piece: Piece) -> list[Piece]:
        return [part for word in cut_removed(piece, WHITESPACE_PATTERN)
                for part in cut_isolated(word, PUNCTUATION_ALONE)]


class CharDelimiterSplit(PreTokenizer):
    """Cuts on one delimiter character, dropping it."""

    def __init__(self, delimiter: str):
        self.pattern = regex.compile(regex.escape(delimiter), FLAGS)

    @classmethod
    def from_json(cls, node: dict, where: str) -> CharDelimiterSplit:
        return cls(char_field(node, "delimiter", where))

    def split(self, piece: Piece) -> list[Piece]:
        return cut_removed(piece, self.pattern)

    def keeps_unmatched(self) -> regex.Pattern[str] | None:
        return self.pattern


class UnicodeScripts(PreTokenizer):
    """Cuts where the script changes, as SentencePiece's Unigram trainer does, with its table of
    Unicode 9.0 scripts. Hiragana, Katakana and the prolonged sound mark count as Han; a space,
    and any code point 9.0 had not assigned (private use too), has no script: it never cuts, and
    the oracle drops such characters at the start of a piece.

    Example: ``" abαβ ひらカタ漢"`` -> ``"ab"``, ``"αβ "``, ``"ひらカタ漢"``.
    """

    def split(self, piece: Piece) -> list[Piece]:
        starts: list[int] = []
        last = None
        for index, char in enumerate(piece.text):
            script = _script(char)
            if script is not None:
                if script != last:
                    starts.append(index)
                last = script
        ends = [*starts[1:], len(piece.text)]
        return [Piece(piece.text[start:end], piece.at_start and start == 0) for start, end in zip(starts, ends)]


SCRIPTS_UNICODE = "9.0"  # of tokenizers' unicode_scripts/scripts.rs
# regex's Script values by number (0 is Unknown), with one of the names each goes by.
_SCRIPT_VALUES = regex._regex.get_properties()["SCRIPT"][1]
_SCRIPT_CLASSES = [(value, regex.compile(rf"\p{{Script={name}}}"))
                   for value, name in sorted({value: name for name, value in _SCRIPT_VALUES.items() if value}.items())]
_NO_SCRIPT = regex.compile(union(f"[{regex.escape(assigned_after(SCRIPTS_UNICODE))}]", r"\p{Script=Unknown}", " "), FLAGS)
_HAN = _SCRIPT_VALUES["HAN"]
_KANA = {_SCRIPT_VALUES["HIRAGANA"], _SCRIPT_VALUES["KATAKANA"]}
_SCRIPT_OF = {"\u30fc": _HAN}  # the prolonged sound mark, Common in Unicode, goes with kana and Han


def _script(char: str) -> int | None:
    """The script the oracle's table gives ``char`` (None for none), Japanese kana as Han."""
    if char not in _SCRIPT_OF:
        script = None
        if not _NO_SCRIPT.match(char):
            script = next(value for value, pattern in _SCRIPT_CLASSES if pattern.match(char))
        _SCRIPT_OF[char] = _HAN if script in _KANA else script
    return _SCRIPT_OF[char]


class FixedLength(PreTokenizer):
    """Cuts into chunks of ``length`` characters."""

    def __init__(self, length: int):
        self.length = length

    @classmethod
    def from_json(cls, node: dict, where: str) -> FixedLength:
        length = defaulted(node, "length", where, 5, int)
        if length < 1:  # the oracle panics on 0 and rejects negatives
            raise TokenizerFileError(child(where, "length"), f"expected a positive length, found {length}")
        return cls(length)

    def split(self, piece: Piece) -> list[Piece]:
        return [Piece(piece.text[start:start + self.length], piece.at_start and start == 0)
                for start in range(0, len(piece.text), self.length)]


class Sequence(PreTokenizer):
    """Each pre-tokenizer in turn, over all the pieces the previous one left."""

    def __init__(self, pre_tokenizers: list[PreTokenizer]):
        self.pre_tokenizers = pre_tokenizers

    @classmethod
    def from_json(cls, node: dict, where: str) -> Sequence:
        return cls(build_components(node, "pretokenizers", where, "pre-tokenizer", PRE_TOKENIZERS))

    def pre_tokenize(self, pieces: list[Piece]) -> list[Piece]:
        for pre_tokenizer in self.pre_tokenizers:
            pieces = pre_tokenizer.pre_tokenize(pieces)
        return pieces


def isolated_pieces(pattern: regex.Pattern[str], text: str) -> list[str]:
    """The texts of ``cut(Piece(text, ...), pattern, _isolated)`` that are not empty.

    When the matches cover the text, none of them empty, they are the pieces, and findall (in C)
    finds them: it agrees with match_spans until an empty match. Otherwise cut does it.
    Example with GPT-2's split: ``"Hello world"`` -> ``["Hello", " world"]``.
    """
    found = pattern.findall(text) if not pattern.groups else [match.group() for match in pattern.finditer(text)]
    if "" not in found and sum(map(len, found)) == len(text):
        return found
    return [part.text for part in cut(Piece(text, False), pattern, _isolated) if part.text]


def spell_bytes(text: str) -> str:
    """``text``'s UTF-8 bytes in the byte-level alphabet, as ByteLevel spells a piece."""
    return bytes_to_chars(text.encode("utf-8"))


class RawSplit:
    """A pre-tokenizer made of an Isolated, not inverted Split and/or a ByteLevel, taken in two steps
    with a cache in between: ``pieces`` cuts the text into raw pieces (whole strings, found in C),
    and ``finish`` turns a raw piece into the pieces the model gets (ByteLevel's, if any).

    The concatenated ``finish`` of each of ``pieces(text)`` is what pre_tokenize gives for the text:
    a Split then ByteLevel cuts ``"Hi there"`` into ``["Hi", " there"]``, which finish spells
    ``["Hi"]`` and ``["Ġthere"]``.
    Only impl's own classes qualify (``from_pre_tokenizer`` checks exact types), so that a subclass
    changing one of them keeps its own behaviour.
    """

    def __init__(self, split: Split | None, byte_level: ByteLevel | None):
        self.split = split
        self.byte_level = byte_level

    @classmethod
    def from_pre_tokenizer(cls, pre_tokenizer: PreTokenizer | None) -> RawSplit | None:
        stages = list(pre_tokenizer.pre_tokenizers) if type(pre_tokenizer) is Sequence else [pre_tokenizer]
        split = stages.pop(0) if stages and type(stages[0]) is Split else None
        byte_level = stages.pop() if stages and type(stages[-1]) is ByteLevel else None
        if stages or split is byte_level is None:  # another stage, or none at all
            return None
        if split is not None and (split.behavior is not _isolated or split.invert):
            return None
        return cls(split, byte_level)

    def pieces(self, text: str) -> list[str]:
        if self.split is not None:
            return isolated_pieces(self.split.pattern, text)
        byte_level = self.byte_level
        if byte_level.add_prefix_space and text and not text.startswith(" "):
            text = " " + text
        return isolated_pieces(GPT2_SPLIT, text) if byte_level.use_regex else [text]

    def finish(self, piece: str) -> list[str]:
        """The model's pieces for one raw piece."""
        spelled = self.spelled([piece])
        if spelled is not None:
            return spelled
        return [part.text for part in self.byte_level.split(Piece(piece, False)) if part.text]

    def spelled(self, pieces: list[str]) -> list[str] | None:
        """The one model piece each raw piece makes (``spelled_joined`` cut apart), or None when
        a raw piece may make several."""
        joined = self.spelled_joined(pieces)
        return None if joined is None else pieces_of(*joined)

    def spelled_joined(self, pieces: list[str]) -> tuple[str, list[int]] | None:
        """The model pieces the raw pieces make, one each, spelled in one go: their joined text
        and where each ends in it (``["Hi", " é"]`` -> ``("HiĠÃ©", [2, 5])``); None when a raw
        piece may make several (ByteLevel's prefix or regex after a Split: without a Split, they
        came in ``pieces``)."""
        byte_level = self.byte_level
        text, ends = joined(pieces)
        if byte_level is None:
            return text, ends
        if self.split is not None and (byte_level.add_prefix_space or byte_level.use_regex):
            return None
        # One byte-level character per byte: an ASCII text has one byte per character.
        if not text.isascii():
            ends = list(accumulate(map(len, map(str.encode, pieces))))
        return spell_bytes(text), ends


PRE_TOKENIZERS: dict[str, type[PreTokenizer]] = {
    "BertPreTokenizer": BertPreTokenizer,
    "ByteLevel": ByteLevel,
    "CharDelimiterSplit": CharDelimiterSplit,
    "Digits": Digits,
    "FixedLength": FixedLength,
    "Metaspace": Metaspace,
    "Punctuation": Punctuation,
    "Sequence": Sequence,
    "Split": Split,
    "UnicodeScripts": UnicodeScripts,
    "Whitespace": Whitespace,
    "WhitespaceSplit": WhitespaceSplit,
}



def pre_tokenizer_from_json(node: dict | None, where: str) -> PreTokenizer | None:
    """The pre-tokenizer a tokenizer.json ``pre_tokenizer`` node describes (None for null)."""
    return None if node is None else build_component(node, where, "pre-tokenizer", PRE_TOKENIZERS)
