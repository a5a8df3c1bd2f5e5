"""Normalizers: the first stage of the pipeline, rewriting the whole input text.

Mirrors tokenizers/src/normalizers/*.rs; impl tracks no offsets, so each normalizer only maps a
string to a string. Unicode questions are answered from ``unicode_tables`` (measured from the
oracle) wherever the oracle's Rust tables are frozen at another Unicode version than Python's.
"""
from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Sequence as Seq

import regex

from . import unicode_tables
from .byte_level import bytes_to_chars
from .fields import ANY_TYPE, build_component, build_components, child, field, optional
from .normalizer_base import Normalizer
from .patterns import compile_pattern, literal_of, match_spans
from .precompiled import Precompiled


class _CodePoints:
    """A set of code points given as inclusive ranges.

    Membership is a binary search over the ranges, done once per distinct character of a text:
    far faster than matching every character against a regex class of hundreds of ranges.
    """

    def __init__(self, ranges: Seq[tuple[int, int]]):
        self._firsts = [first for first, _ in ranges]
        self._lasts = [last for _, last in ranges]

    def __contains__(self, char: str) -> bool:
        index = bisect.bisect_right(self._firsts, ord(char)) - 1
        return index >= 0 and ord(char) <= self._lasts[index]

    def found_in(self, text: str) -> set[str]:
        return {char for char in set(text) if char in self}

    def deletions_in(self, text: str) -> dict[int, None]:
        """A str.translate table deleting the members found in ``text``."""
        return dict.fromkeys(map(ord, self.found_in(text)))


_UNNORMALIZED = _CodePoints(unicode_tables.UNNORMALIZED)
_COMBINING_MARKS = _CodePoints(unicode_tables.COMBINING_MARKS)
_NONSPACING_MARKS = _CodePoints(unicode_tables.NONSPACING_MARKS)
_BERT_DROPPED = _CodePoints(unicode_tables.BERT_DROPPED)
_TO_SPACE = dict.fromkeys(map(ord, unicode_tables.WHITESPACE), " ")
# BertNormalizer's "Chinese characters": the CJK ideograph blocks, as listed in bert.rs.
_CJK_IDEOGRAPH = regex.compile(
    "[\u4E00-\u9FFF\u3400-\u4DBF\U00020000-\U0002A6DF\U0002A700-\U0002B73F"
    "\U0002B740-\U0002B81F\U0002B920-\U0002CEAF\uF900-\uFAFF\U0002F800-\U0002FA1F]"
)
# Nmt (unicode.rs) drops some control characters and turns some separators into a space.
_NMT = {
    **dict.fromkeys([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]),
    **dict.fromkeys([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581,
                     0xFEFF, 0xFFFD], " "),
}


def _normalization_form(form: str, text: str) -> str:
    """``unicodedata.normalize`` as the oracle's Unicode 9.0 tables would do it.

    The oracle leaves UNNORMALIZED characters alone and, being inert starters there, they also cut
    the text into runs that normalize independently; every other character normalizes the same
    under any unicodedata since 9.0. So: normalize the runs between them, keep them as they are.
    Text that Python's tables find normalized already is left as it is: each run of it is too.
    """
    if unicodedata.is_normalized(form, text):  # most text is, and this check is several times faster
        return text
    barriers = _UNNORMALIZED.found_in(text)
    if not barriers:
        return unicodedata.normalize(form, text)
    pieces = regex.split("([" + "".join(map(regex.escape, barriers)) + "])", text)
    # Split keeps the barriers at odd indexes, between the runs.
    return "".join(piece if index % 2 else unicodedata.normalize(form, piece) for index, piece in enumerate(pieces))


class _UnicodeNormalizationForm(Normalizer):
    form: str

    def normalize(self, text: str) -> str:
        return _normalization_form(self.form, text)


class NFC(_UnicodeNormalizationForm):
    form = "NFC"


class NFD(_UnicodeNormalizationForm):
    form = "NFD"


class NFKC(_UnicodeNormalizationForm):
    form = "NFKC"


class NFKD(_UnicodeNormalizationForm):
    form = "NFKD"


class Lowercase(Normalizer):
    """Rust's ``char::to_lowercase`` on each character: no context, so a final Σ becomes σ."""

    def normalize(self, text: str) -> str:
        return text.translate(unicode_tables.LOWERCASE)


class Strip(Normalizer):
    """Removes leading and/or trailing whitespace (Rust's ``char::is_whitespace``)."""

    def __init__(self, strip_left: bool, strip_right: bool):
        self.strip_left = strip_left
        self.strip_right = strip_right

    @classmethod
    def from_json(cls, node: dict, where: str) -> Strip:
        return cls(field(node, "strip_left", where, bool), field(node, "strip_right", where, bool))

    def normalize(self, text: str) -> str:
        if self.strip_left:
            text = text.lstrip(unicode_tables.WHITESPACE)
        if self.strip_right:
            text = text.rstrip(unicode_tables.WHITESPACE)
        return text


class StripAccents(Normalizer):
    """Removes every combining mark (general category M), wherever it stands."""

    def normalize(self, text: str) -> str:
        return text.translate(_COMBINING_MARKS.deletions_in(text))


class Replace(Normalizer):
    """Replaces every match of a pattern (a literal or an Oniguruma regex) with literal content."""

    def __init__(self, pattern: regex.Pattern[str], content: str, literal: str | None = None):
        self.pattern = pattern
        self.content = content
        # The pattern's text when it is a non-empty literal: str.replace then does the same, faster.
        self.literal = literal or None

    @classmethod
    def from_json(cls, node: dict, where: str) -> Replace:
        pattern_node = field(node, "pattern", where)
        pattern = compile_pattern(pattern_node, child(where, "pattern"))
        return cls(pattern, field(node, "content", where, str), literal_of(pattern_node))

    def normalize(self, text: str) -> str:
        if self.literal is not None:
            return text.replace(self.literal, self.content)
        pieces, kept_from = [], 0
        for begin, end in match_spans(self.pattern, text):
            pieces += [text[kept_from:begin], self.content]
            kept_from = end
        pieces.append(text[kept_from:])
        return "".join(pieces)

    def _keeps_start(self, text: str) -> bool:
        # A replacement shorter than its match stands for the match's last characters, so a
        # shortening match at offset 0 moves the start.
        first = next(match_spans(self.pattern, text), None)
        return first is None or first[0] > 0 or len(self.content) >= first[1] - first[0]


class Prepend(Normalizer):
    """Puts a prefix before any non-empty text (even one that already starts with it)."""

    def __init__(self, prepend: str):
        self.prepend = prepend

    @classmethod
    def from_json(cls, node: dict, where: str) -> Prepend:
        return cls(field(node, "prepend", where, str))

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text


class ByteLevel(Normalizer):
    """Spells the text's UTF-8 bytes in GPT-2's byte-level alphabet."""

    def normalize(self, text: str) -> str:
        return bytes_to_chars(text.encode("utf-8"))


class Nmt(Normalizer):
    """The NMT cleanup: drops some control characters and turns some separators into a space."""

    def normalize(self, text: str) -> str:
        return text.translate(_NMT)


class BertNormalizer(Normalizer):
    """BERT's cleanup, CJK spacing, accent stripping and lowercasing, each optional."""

    def __init__(self, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool | None, lowercase: bool):
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        # Unset strip_accents follows lowercase, as in bert.rs.
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.lowercase = lowercase

    @classmethod
    def from_json(cls, node: dict, where: str) -> BertNormalizer:
        return cls(
            clean_text=field(node, "clean_text", where, bool),
            handle_chinese_chars=field(node, "handle_chinese_chars", where, bool),
            strip_accents=optional(node, "strip_accents", where, None, bool),
            lowercase=field(node, "lowercase", where, bool),
        )

    def normalize(self, text: str) -> str:
        if self.clean_text:
            # Dropping comes first, so a character both dropped and whitespace is dropped.
            text = text.translate({**_TO_SPACE, **_BERT_DROPPED.deletions_in(text)})
        if self.handle_chinese_chars:
            text = _CJK_IDEOGRAPH.sub(r" \g<0> ", text)
        if self.strip_accents:
            text = _normalization_form("NFD", text)
            text = text.translate(_NONSPACING_MARKS.deletions_in(text))
        if self.lowercase:
            text = text.translate(unicode_tables.LOWERCASE)
        return text


class Sequence(Normalizer):
    """Applies its normalizers in order."""

    def __init__(self, normalizers: list[Normalizer]):
        self.normalizers = normalizers

    @classmethod
    def from_json(cls, node: dict, where: str) -> Sequence:
        return cls(build_components(node, "normalizers", where, "normalizer", NORMALIZERS, UNTAGGED_NORMALIZERS))

    def normalize(self, text: str) -> str:
        for normalizer in self.normalizers:
            text = normalizer.normalize(text)
        return text

    def normalize_piece(self, text: str) -> tuple[str, bool]:
        keeps_start = True
        for normalizer in self.normalizers:
            text, kept = normalizer.normalize_piece(text)
            keeps_start = keeps_start and kept
        return text, keeps_start


# The oracle's "type" names; "Bert" is BertNormalizer's.
NORMALIZERS: dict[str, type[Normalizer]] = {
    "Bert": BertNormalizer,
    "Strip": Strip,
    "StripAccents": StripAccents,
    "NFC": NFC,
    "NFD": NFD,
    "NFKC": NFKC,
    "NFKD": NFKD,
    "Sequence": Sequence,
    "Lowercase": Lowercase,
    "Nmt": Nmt,
    "Precompiled": Precompiled,
    "Replace": Replace,
    "Prepend": Prepend,
    "ByteLevel": ByteLevel,
}
# What the oracle tries, in order, for any other "type" or none: the normalizers with fields,
# whatever their "type" says. So {"type": "BertNormalizer", ...} is a BertNormalizer too.
UNTAGGED_NORMALIZERS = tuple((name, shape, ANY_TYPE) for name, shape in (
    ("BertNormalizer", BertNormalizer), ("Strip", Strip), ("Sequence", Sequence), ("Replace", Replace),
    ("Prepend", Prepend)))


def normalizer_from_json(node: dict | None, where: str) -> Normalizer | None:
    """The normalizer a tokenizer.json ``normalizer`` node describes, or None for null."""
    return None if node is None else build_component(node, where, "normalizer", NORMALIZERS, UNTAGGED_NORMALIZERS)
