"""Exhaustive sweeps: every vocabulary token, every code point, every ASCII pair, as texts to encode.

Random text rarely hits the one code point whose tables differ, so these lists are walked in full
by the runner (stride 1) and sampled by pytest. Code points where the oracle's Unicode tables and
Python's disagree are found by probing the oracle itself (``unicode_disagreements``): tokenizers
uses four sets of tables (Oniguruma for patterns, Rust's regex crate for the Whitespace
pre-tokenizer, Rust's char methods, and the unicode-normalization and unicode_categories crates),
none of them the Unicode version of Python's ``unicodedata`` or of the ``regex`` module.
"""
from __future__ import annotations

import string
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import cache

import regex
import tokenizers
from tokenizers import normalizers, pre_tokenizers

from textbound.oracles.tokenizers_oracle import TokenizersOracle

MAX_CODE_POINT = 0x10FFFF
# {c} is the code point, {s} a special token of the family.
CODE_POINT_CONTEXTS = ("{c}", "a{c}b", " {c}", "{c}{c}")
AFTER_SPECIAL_CONTEXT = "{s}{c}"
ASCII_PAIR_CONTEXTS = ("{a}{b}", " {a}{b}", "{a} {b}\n", "\t{a}\t{b}", "{a}\n{b} ")
# Category patterns whose every match is one character, probed in Oniguruma and in `regex`.
CATEGORY_PATTERNS = (r"\p{L}", r"\p{M}", r"\p{N}", r"\p{P}", r"\p{S}", r"\p{Z}", r"\p{Cc}", r"\p{Cf}", r"\p{Co}",
                     r"\p{Cn}")
NORMAL_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
# Separates single characters in probes: no table maps anything to it and it composes with nothing.
SEPARATOR = "\x00"
# The oracle slows down more than linearly on long texts, so probes feed it this much at once.
PROBE_CHUNK = 8192


def is_surrogate(code_point: int) -> bool:
    return 0xD800 <= code_point <= 0xDFFF


@cache
def assigned_code_points() -> tuple[int, ...]:
    """Code points Python's tables assign, surrogates and private use excepted."""
    return tuple(cp for cp in range(MAX_CODE_POINT + 1) if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co"))


@cache
def private_use_code_points() -> tuple[int, ...]:
    return tuple(cp for cp in range(MAX_CODE_POINT + 1) if unicodedata.category(chr(cp)) == "Co")


@cache
def _probe_characters(step: int) -> str:
    """Every ``step``-th code point but the surrogates and the separator, in order."""
    return "".join(chr(cp) for cp in range(1, MAX_CODE_POINT + 1, step) if not is_surrogate(cp))


@cache
def _categories(step: int) -> tuple[str, ...]:
    return tuple(map(unicodedata.category, _probe_characters(step)))


# -- probing the oracle's tables -----------------------------------------------------------------
# Each probe gives two sequences aligned with the probe characters, the oracle's view and Python's
# ("+" where a property holds, or each character's mapping); disagreements are where they differ.

def _differences(text: str, oracle: Sequence, python: Sequence, block: int = 4096) -> list[int]:
    """Code points of ``text`` where two aligned sequences differ, comparing blocks first."""
    return [ord(text[i]) for start in range(0, len(text), block)
            if oracle[start:start + block] != python[start:start + block]
            for i in range(start, min(start + block, len(text))) if oracle[i] != python[i]]


def _signs(flags: Iterable) -> str:
    return "".join(["+" if flag else "-" for flag in flags])


def _marked(text: str, code_points: Iterable[int]) -> str:
    return text.translate(dict.fromkeys(code_points, SEPARATOR))


def _chunks(text: str) -> Iterable[tuple[int, str]]:
    return ((start, text[start:start + PROBE_CHUNK]) for start in range(0, len(text), PROBE_CHUNK))


def _piece_classes(pre_tokenizer, text: str) -> str:
    """How a pre-tokenizer treats each character, one letter per character: R removed, A a piece
    alone, J joined in one piece with its neighbours.

    The probed pre-tokenizers cut text into pieces whose characters are all of one kind, so one
    character stands for its piece: it is classed between two "a"s, which join it only if it is of
    their kind (and "a" is a word character, not a space, digit or punctuation).
    """
    pieces = [(start + begin, start + end) for start, chunk in _chunks(text)
              for _, (begin, end) in pre_tokenizer.pre_tokenize_str(chunk)]
    representative_classes = bytearray()
    for _, chunk in _chunks("".join(text[begin] for begin, _ in pieces)):
        between = bytearray(b"R" * (2 * len(chunk) + 1))
        for _, (begin, end) in pre_tokenizer.pre_tokenize_str("a" + "a".join(chunk) + "a"):
            between[begin:end] = b"A" if end - begin == 1 else b"J" * (end - begin)
        representative_classes += between[1::2]  # odd positions hold the representatives
    classes = bytearray(b"R" * len(text))
    for (begin, end), found in zip(pieces, representative_classes, strict=True):
        classes[begin:end] = bytes([found]) * (end - begin)
    return classes.decode("ascii")


@cache
def unicode_disagreements(step: int = 1) -> dict[int, tuple[str, ...]]:
    """Code point -> the probes on which the oracle's tables and Python's disagree about it,
    probing every ``step``-th code point.

    At step 1 this takes about ten seconds (every code point through twenty-odd oracle calls).
    """
    text = _probe_characters(step)
    categories = _categories(step)
    by_category: dict[str, list[int]] = {}
    for c, category in zip(text, categories):
        by_category.setdefault(category, []).append(ord(c))
    found: dict[int, list[str]] = {}

    def note(name: str, oracle: Sequence, python: Sequence) -> None:
        for cp in _differences(text, oracle, python):
            found.setdefault(cp, []).append(name)

    for pattern in CATEGORY_PATTERNS:
        wanted = pattern[3:-1]
        replace = normalizers.Replace(tokenizers.Regex(pattern), SEPARATOR)
        onig = "".join(replace.normalize_str(chunk) for _, chunk in _chunks(text))
        in_category = (cp for category, cps in by_category.items() if category.startswith(wanted) for cp in cps)
        note(f"{pattern} Oniguruma vs unicodedata", onig, _marked(text, in_category))
        note(f"{pattern} Oniguruma vs regex", onig, regex.sub(pattern, SEPARATOR, text))

    def per_character(name: str, normalizer, python_map: Callable[[str], str]) -> None:
        """Both sides map the characters joined by SEPARATOR, which keeps each on its own."""
        oracle = "".join(normalizer.normalize_str(SEPARATOR.join(chunk)) + SEPARATOR for _, chunk in _chunks(text))
        note(name, oracle[:-1].split(SEPARATOR), python_map(SEPARATOR.join(text)).split(SEPARATOR))

    for form in NORMAL_FORMS:
        per_character(f"{form} normalizer vs unicodedata", getattr(normalizers, form)(),
                      lambda joined, form=form: unicodedata.normalize(form, joined))
    per_character("Lowercase normalizer vs str.lower", normalizers.Lowercase(), str.lower)
    marks = dict.fromkeys((cp for category, cps in by_category.items() if category[0] == "M" for cp in cps), None)
    per_character("StripAccents normalizer vs unicodedata M", normalizers.StripAccents(),
                  lambda joined: joined.translate(marks))

    def by_pieces(name: str, classes: str, wanted: str, python_flags: Iterable) -> None:
        oracle_signs = classes.translate(str.maketrans("RAJ", "".join("+" if c == wanted else "-" for c in "RAJ")))
        note(name, oracle_signs, _signs(python_flags))

    by_pieces("char::is_whitespace vs str.isspace", _piece_classes(pre_tokenizers.WhitespaceSplit(), text), "R",
              map(str.isspace, text))
    by_pieces("char::is_numeric vs unicodedata N", _piece_classes(pre_tokenizers.Digits(individual_digits=True), text),
              "A", [category[0] == "N" for category in categories])
    by_pieces("Punctuation pre-tokenizer vs unicodedata P", _piece_classes(pre_tokenizers.Punctuation(), text), "A",
              [c in string.punctuation or category[0] == "P" for c, category in zip(text, categories)])
    words = _piece_classes(pre_tokenizers.Whitespace(), text)
    for name, wanted, pattern in (("\\w", "J", regex.compile(r"\w")), ("\\s", "R", regex.compile(r"\s"))):
        by_pieces(f"Whitespace pre-tokenizer {name} vs regex", words, wanted, map(pattern.match, text))
    return {cp: tuple(names) for cp, names in sorted(found.items())}


# -- texts ---------------------------------------------------------------------------------------

def code_point_texts(code_points: Iterable[int], special: str | None = None,
                     contexts: Sequence[str] = CODE_POINT_CONTEXTS) -> list[str]:
    """Each code point in each context, and right after ``special`` when given."""
    contexts = [*contexts, AFTER_SPECIAL_CONTEXT] if special else list(contexts)
    return [context.format(c=chr(cp), s=special) for cp in code_points for context in contexts]


def ascii_pair_texts() -> list[str]:
    """Every pair of ASCII characters, with whitespace around and between them."""
    ascii_chars = [chr(i) for i in range(128)]
    return [context.format(a=a, b=b) for a in ascii_chars for b in ascii_chars for context in ASCII_PAIR_CONTEXTS]


def vocabulary_ids(oracle: TokenizersOracle, stride: int = 1) -> list[int]:
    """Every ``stride``-th id of the vocabulary, added tokens included, to decode alone."""
    return sorted(oracle.vocab().values())[::stride]


def vocabulary_texts(oracle: TokenizersOracle, stride: int = 1) -> list[str]:
    """What every ``stride``-th id decodes to alone, once each, empty results dropped."""
    decoded = (oracle.decode([token_id]) for token_id in vocabulary_ids(oracle, stride))
    return list(dict.fromkeys(text for text in decoded if text))


def first_special_token(oracle: TokenizersOracle) -> str | None:
    specials = sorted(oracle.special_ids)
    return oracle.id_to_token(specials[0]) if specials else None


def sweep_texts(oracle: TokenizersOracle, stride: int = 1,
                disputed: dict[int, tuple[str, ...]] | None = None) -> list[str]:
    """Every sweep for one family, each taking every ``stride``-th item: vocabulary texts, disputed
    and assigned code points in context, private-use code points alone, ASCII pairs. (Disputed
    code points are sampled by probing every ``stride``-th code point, which is what makes a
    sampled sweep cheap; ``disputed`` is that probe's answer when the caller has it already.)"""
    special = first_special_token(oracle)
    if disputed is None:
        disputed = unicode_disagreements(step=stride)
    return (vocabulary_texts(oracle, stride)
            + code_point_texts(disputed, special)
            + code_point_texts(assigned_code_points()[::stride], special)
            + code_point_texts(private_use_code_points()[::stride], contexts=("{c}",))
            + ascii_pair_texts()[::stride])
