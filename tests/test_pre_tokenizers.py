"""impl.tokenizer.pre_tokenizers (and impl.tokenizer.patterns) against the pre-tokenizers of `tokenizers`, built from
the same JSON node.

Both sides load each pre-tokenizer node and cut the same texts into pieces: Hypothesis text from
every plane, code points swept in several contexts, Oniguruma constructs one by one, the patterns
of public tokenizers and the pre-tokenizers of the real tokenizer.json files. Pieces that do not
start the input (Metaspace's prepend_scheme "first") are compared through a whole tokenizer that
has an added token in front. Faulty nodes must be refused, naming the JSON path.

``sweep_codepoints`` checks any set of code points; pytest runs it on a stride sample, and
``python -m tests.test_pre_tokenizers`` runs it on every code point.
"""
from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import regex
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.impl.tokenizer import unicode_age
from textbound.impl.errors import TokenizerFileError
from textbound.impl.tokenizer.patterns import compile_pattern
from textbound.impl.tokenizer.pre_tokenizers import PRE_TOKENIZERS, Piece, pre_tokenizer_from_json
from tests.families import SHARED_MODEL_DIRS
from tests.stage_oracle import assert_refused_by_both, oracle_with, short_text_leaning_on

WHERE = "tokenizer.json: $.pre_tokenizer"
ADDED = "<|x|>"  # an added token put before a text, so that the text does not start the input

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

# Split patterns of public tokenizers (GPT-2 in ByteLevel, Llama 3, Qwen 2, GPT-4o, DeepSeek, the
# possessive variant of cl100k), and Oniguruma constructs they or others lean on.
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
GPT4O = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
            r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK_CJK = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
CL100K_POSSESSIVE = (r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
                     r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s")
PUBLIC_PATTERNS = {"gpt2": GPT2, "llama3": LLAMA3, "qwen2": QWEN2, "gpt4o": GPT4O, "deepseek": DEEPSEEK,
                   "deepseek_cjk": DEEPSEEK_CJK, "cl100k_possessive": CL100K_POSSESSIVE}


def split(pattern: str, behavior: str = "Isolated", invert: bool = False, kind: str = "Regex") -> dict:
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


def byte_level(add_prefix_space: bool = False, use_regex: bool = True) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True, "use_regex": use_regex}


def metaspace(prepend_scheme: str = "always", split: bool = True, replacement: str = "▁") -> dict:
    return {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}


def sequence(*members: dict) -> dict:
    return {"type": "Sequence", "pretokenizers": list(members)}


NODES = [
    byte_level(), byte_level(add_prefix_space=True), byte_level(use_regex=False),
    byte_level(add_prefix_space=True, use_regex=False),
    metaspace(), metaspace("first"), metaspace("never"), metaspace("always", split=False),
    metaspace("first", split=False), metaspace("never", replacement="_"),
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, {"type": "BertPreTokenizer"},
    {"type": "Punctuation"}, *({"type": "Punctuation", "behavior": b} for b in BEHAVIORS),
    {"type": "Digits", "individual_digits": False}, {"type": "Digits", "individual_digits": True},
    {"type": "CharDelimiterSplit", "delimiter": "o"}, {"type": "FixedLength"}, {"type": "FixedLength", "length": 2},
    {"type": "UnicodeScripts"},
    # Every behavior, inverted or not, on a literal and on a regex whose matches can touch.
    *(split(pattern, behavior, invert, kind) for kind, pattern in (("String", " "), ("Regex", r"\p{N}+|a"))
      for behavior in BEHAVIORS for invert in (False, True)),
    # Empty matches, and a literal of two characters.
    *(split(pattern, behavior, kind=kind)
      for kind, pattern in (("String", ""), ("String", "ab"), ("Regex", "a*"), ("Regex", r"(?=\p{Lu})"))
      for behavior in ("Isolated", "MergedWithNext")),
    *(split(pattern) for pattern in PUBLIC_PATTERNS.values()),
    sequence(), sequence(split(LLAMA3), byte_level()),
    sequence({"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True}, metaspace("first")),
    sequence(split(" ", "MergedWithNext", kind="String"), metaspace("first"), {"type": "Punctuation"}),
]


def node_id(node: dict) -> str:
    return json.dumps(node, ensure_ascii=False)


def oracle_tokenizer(pre_tokenizer: dict | None, vocab: Iterable[str] = ()) -> tokenizers.Tokenizer:
    """A tokenizer with only this pre-tokenizer, one added token, and a word per vocab entry."""
    words = {"[UNK]": 0, **{word: i for i, word in enumerate(dict.fromkeys(vocab), start=1)}}
    added = {"id": len(words) + 1, "content": ADDED, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
    return oracle_with("pre_tokenizer", pre_tokenizer, vocab=words, added_tokens=[added])


@functools.lru_cache(maxsize=None)
def oracle_pre_tokenize_str(node_json: str):
    return oracle_tokenizer(json.loads(node_json)).pre_tokenizer.pre_tokenize_str


@functools.lru_cache(maxsize=None)
def impl_pre_tokenizer(node_json: str):
    return pre_tokenizer_from_json(json.loads(node_json), WHERE)


def oracle_pieces(node: dict, text: str) -> list[str]:
    return [piece for piece, _ in oracle_pre_tokenize_str(json.dumps(node))(text)]


def impl_pieces(node: dict, text: str, at_start: bool = True) -> list[str]:
    return [piece.text for piece in impl_pre_tokenizer(json.dumps(node)).pre_tokenize([Piece(text, at_start)])]


def oracle_pieces_after_added_token(node: dict, text: str, vocab: list[str]) -> list[str]:
    """The pieces of ``text`` when an added token precedes it, through a whole tokenizer whose
    WordLevel vocabulary is ``vocab``: a piece outside it comes back as [UNK]."""
    encoding = oracle_tokenizer(node, vocab).encode(ADDED + text, add_special_tokens=False)
    return encoding.tokens[1:]


def assert_same(node: dict, text: str) -> None:
    assert impl_pieces(node, text) == oracle_pieces(node, text), f"input {text!r}"


def assert_same_after_added_token(node: dict, text: str) -> None:
    expected = impl_pieces(node, text, at_start=False)
    assert oracle_pieces_after_added_token(node, text, expected) == expected, f"input {text!r}"


# -- sweeping code points -------------------------------------------------------------------------

SCALAR_VALUES = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]

# Contexts for a code point c: alone, against letters, digits, spaces, an apostrophe, punctuation,
# a newline and itself. The contexts of a block of code points run together in one text, so each
# also meets its neighbours.
PROBES = ("{0}", "a{0}", "{0}a", " {0}", "{0} ", "1{0}", "'{0}", "{0}{0}", "{0}!", "\n{0}", "▁{0}")


def _probe_text(codepoints: list[int], probes: tuple[str, ...]) -> str:
    return "".join(probe.format(chr(cp)) for cp in codepoints for probe in probes)


def sweep_codepoints(node: dict, codepoints: Iterable[int] = SCALAR_VALUES, block: int = 512,
                     probes: tuple[str, ...] = PROBES) -> list[tuple[str, list[str], list[str]]]:
    """(input, oracle pieces, impl pieces) for every code point whose probes the two cut apart.

    Code points go through in blocks, each one text; a block that differs is halved until the
    code points that differ stand alone.
    """
    pending = list(codepoints)
    blocks = [pending[i:i + block] for i in range(0, len(pending), block)]
    divergences = []
    while blocks:
        current = blocks.pop()
        text = _probe_text(current, probes)
        expected, actual = oracle_pieces(node, text), impl_pieces(node, text)
        if expected == actual:
            continue
        if len(current) == 1:
            divergences.append((text, expected, actual))
        else:
            blocks += [current[:len(current) // 2], current[len(current) // 2:]]
    return divergences


# A prime stride over every code point, and all the code points whose class hinges on the Unicode
# version (assigned after an oracle engine's tables), strided too.
NEWER = [cp for runs in unicode_age.ASSIGNED_IN.values() for first, last in runs for cp in range(first, last + 1)]
SAMPLED_CODEPOINTS = sorted({*range(0x300), *SCALAR_VALUES[0x300::1999], *NEWER[::97],
                             *(cp for cp, twin, _ in unicode_age.PROPERTY_CHANGES)})


# The nodes whose cuts depend on character classes.
SWEPT = [byte_level(), {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, {"type": "BertPreTokenizer"},
         {"type": "Punctuation"}, {"type": "Digits", "individual_digits": False},
         {"type": "Digits", "individual_digits": True}, metaspace(), {"type": "UnicodeScripts"},
         *(split(p) for p in PUBLIC_PATTERNS.values())]


@pytest.mark.parametrize("node", SWEPT, ids=node_id)
def test_sampled_codepoint_sweep(node: dict) -> None:
    assert sweep_codepoints(node, SAMPLED_CODEPOINTS)[:3] == []


# -- Hypothesis and edge cases --------------------------------------------------------------------

# Characters that make pre-tokenizers cut: spaces of every kind, digits and numbers of many
# scripts, punctuation and symbols, apostrophes and contractions, letters whose class changed or
# is newer than some oracle table (U+0295, U+166D, U+111C9, U+11DCF...), the Latin-1 characters
# Oniguruma's \w treats apart, and the metaspace and byte-level alphabets.
INTERESTING = (
    " \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u2029\u3000\u200b\u200c\u200d\ufeff"
    "0123456789٣৩１Ⅷ½²³¹¼¾①\U0001d7ce\U00016d70\U00011de0"
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»—…、。「」\u166d\U000111c9\u2e43\U0001144b$€+"
    "'sS'tT'reRE'veVE'mM'llLL'dDſK"
    "aAzZßẞéÉıİΣςσʕʖ中日アのजका\u0301\u0345\U00011dcf\U00016100\U0001e5d0\U00031350"
    "▁ĠĊ😀👍🏽\u200d\ue000\ufffd"
)
texts = short_text_leaning_on(INTERESTING)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@settings(max_examples=25, deadline=None)
@given(text=texts)
def test_pre_tokenize_matches_tokenizers(node: dict, text: str) -> None:
    assert_same(node, text)


EDGE_TEXTS = [
    "", " ", "  ", "▁", "▁▁a", " a", "a ", "a  b", "\n\n", " \n ", "Hello, world!", "I'm  don't", "'S'LL'Ve",
    "1234567", "3.14", "a1b22c333", "ʕ•ᴥ•ʔ", "x\U00011dcfy", "中文 字", "😀 👍🏽", "\u3000a\u2028b", "a_b-c",
    "²³¹¼", "ab\u200dcd", "\t\tx", "x!!!\r\n\r\n", "ooo", "....", "\u166d\U000111c9",
]


@pytest.mark.parametrize("node", NODES, ids=node_id)
def test_edge_cases(node: dict) -> None:
    differ = [(text, expected, actual) for text in EDGE_TEXTS
              if (expected := oracle_pieces(node, text)) != (actual := impl_pieces(node, text))]
    assert differ == []


# Pieces that do not start the input: Metaspace "first" prepends only to the one that does.
NOT_AT_START = [metaspace("first"), metaspace("first", split=False), metaspace("always"), metaspace("never"),
                sequence(split(" ", "Removed", kind="String"), metaspace("first")),
                sequence(metaspace("first"), {"type": "Digits", "individual_digits": True})]


@pytest.mark.parametrize("node", NOT_AT_START, ids=node_id)
@pytest.mark.parametrize("text", ["hello world", " hello", "▁x", "a b  c", "1 2", ""])
def test_pieces_after_an_added_token(node: dict, text: str) -> None:
    assert_same_after_added_token(node, text)


@pytest.mark.parametrize("node", NOT_AT_START, ids=node_id)
@settings(max_examples=30, deadline=None)
@given(text=texts)
def test_pieces_after_an_added_token_hypothesis(node: dict, text: str) -> None:
    assert_same_after_added_token(node, text)


def test_only_the_first_piece_keeps_at_start() -> None:
    pieces = pre_tokenizer_from_json(split(" ", "Removed", kind="String"), WHERE).pre_tokenize(
        [Piece("a b", True), Piece(" c d", True), Piece("e", False)])
    assert pieces == [Piece("a", True), Piece("b", False), Piece("c", False), Piece("d", False), Piece("e", False)]


def test_every_supported_type_is_tested() -> None:
    assert set(PRE_TOKENIZERS) == {node["type"] for node in NODES}


def test_null_pre_tokenizer_is_none() -> None:
    assert pre_tokenizer_from_json(None, WHERE) is None


# -- Oniguruma constructs -------------------------------------------------------------------------

# (pattern, text): anchors, dot, empty matches, possessive and interval quantifiers, case folding,
# escapes, POSIX brackets, set operations, inline options, class escapes inside and out of brackets.
ONIGURUMA_CASES = [
    (r"^a", "a\na\ra\u2028a"), (r"a$", "a\na\r\na\u2028a"), (r"$", "ab\ncd\n"), (r"\Z", "ab\n\n"), (r"\z", "ab\n"),
    (r"\A.", "abc"), (r".", "a\nb\r"), (r"(?m).", "a\nb"), (r"(?m:a.)b|.", "a\nb"), (r"", "abc"), (r"x*", "axxb"),
    (r"\b", "ab cd a²b"), (r"\B", "ab cd"), (r"a*+a", "aaa"), (r"a++", "aaab"), (r"a?+", "ab"),
    (r"a{1,2}+", "aaaaa"), (r"a{2}+", "aaaaa"), (r"a{,2}", "aaaaa"), (r"a{2}?", "aaaaa"), (r"a{1,2}?", "aaa"),
    (r"\p{N}{1,3}+", "12345 6"), (r"\u0041{2}+", "AAAAA"), (r"(?:ab){1,2}+", "abababab"), (r"[ab]{2}+", "abba"),
    (r"(?i)ss", "ß SS ss ſs"), (r"(?i:ß)", "ss SS ß ẞ"), (r"(?i)k", "K k K"), (r"(?i:'s|'t)", "'S 'ſ 'T"),
    (r"(?i)\p{Lu}", "aA"), (r"(?i)[\p{Lu}]", "aA"), (r"(?i)\P{Lu}", "aA1"), (r"(?i)[^\p{Lu}]", "aA1"),
    (r"x(?i)a|b", "xA B xb"), (r"(a)(?i)b|c", "C c ab aB"), (r"(?i)a(?-i)b", "AB Ab aB"), (r"(?x) a b ", "ab"),
    (r"\x{41}", "ABA"), (r"\x{1F600}", "a😀"), (r"\u0041", "ABA"), (r"\x41", "A"), (r"\101", "A"),
    (r"\o{101}", "A"), (r"\cA", "\x01"), (r"\e", "a\x1bb"), (r"\h+", "0aFg"), (r"\H", "0g"), (r"\N", "a\nb"),
    (r"\O", "a\nb"), (r"\R", "a\r\nb\nc"), (r"\X", "e\u0301x"), (r"a\Kb", "abab"), (r"\Ga", "aab"),
    (r"(?<=a)b", "abab"), (r"(?<!a)b", "bab"), (r"(?<n>a)\k<n>", "aa"), (r"(a)\1", "aa"),
    (r"[[:punct:]]", "a!b$c"), (r"[[:^punct:]]+", "a!b$c"), (r"[[:word:]]", "a_²"), (r"[[:alnum:]]", "a1٣"),
    (r"[[:digit:]]", "1٣"), (r"[[:xdigit:]]", "aF٣"), (r"\p{XDigit}", "aF٣"), (r"[a-z&&[^aeiou]]", "abcde"),
    (r"[\w&&[^a]]+", "abc²"), (r"[]a]", "]a"), (r"[\]]", "]"), (r"[a||b]", "a|b"), (r"[+--]", "+,-."),
    (r"[~~]", "~a"), (r"[\w]", "a²"), (r"\w", "a²\u200c"), (r"\W", "a²\u200c"), (r"[\W]", "a²\u200c"),
    (r"\p{Word}", "a²"), (r"[\p{Word}]", "a²"), (r"\p{^L}", "a1"), (r"\P{^L}", "a1"), (r"\p{Latn}", "aα"),
    (r"\p{Lowercase_Letter}", "aA"), (r"\p{LC}", "aA1"), (r"\p{In_Basic_Latin}", "aé"), (r"\d", "1٣"),
    (r"[^\S\n]", "a \n"), (r"\s+(?!\S)", "a   b"), (r"\s++$", "a  \n"),
    (r"\p{L}", "\u0295\U00011dcf"), (r"\p{Ll}", "\u0295\u0296"), (r"\p{Lo}", "\u0295\u0296"),
    (r"\p{Lower}", "\u0295"), (r"\p{Cn}", "\U00011dcf\u0378"), (r"\P{L}", "\U00011dcfa"),
    # Text segments, absent operators, option letters (ASCII classes, whole options, minus parts),
    # and the properties corrected to Oniguruma's tables.
    (r"\y", "e\u0301x\r\n🇦🇧🇨👍🏽👨\u200d👩각"), (r"\Y", "e\u0301\u0301x\r\n🇦🇧🇨"), (r"\X", "e\u0301x\r\n🇦🇧🇨👍🏽"),
    (r"(?y{g})\X", "e\u0301x"), (r"(?~abc)", "abc xabcx"), (r"(?~|abc|\w+)", "abc xabcx"), (r"(?~|abc)", "abc"),
    (r"(?~)", "abc"), (r"(?~|)", "abc"), (r"(?~|345|\d*)", "12345678"), (r"(?~|b)a$", "ab"),
    (r"x(?~|c)(?:a|b)+", "xabcab"), (r"(?~|c).+|c.", "xabcab"), (r"(?~|c)a(?~|).", "acac"), (r"(?~a)+", "bab"),
    (r"(?W)\w+", "aé_1 ²"), (r"(?iW)\w+", "kK\u212aſs"), (r"(?iW)[\w]+", "kK\u212aſs"), (r"(?W)a\b", "a é"),
    (r"(?W:\w)\w", "éé"), (r"(?W)(?-W)\w", "é"), (r"(?D)\d", "1٣"), (r"(?S)\s", "a \xa0b"),
    (r"(?P)[[:punct:]]+", "_!¡$€"), (r"(?P)\p{Punct}", "_!¡$"), (r"(?P)\p{Alpha}", "aé"), (r"(?P)[[:upper:]]", "AÀ"),
    (r"(?i-imx:a)", "aA"), (r"(?i-)a", "aA"), (r"(?-)a", "aA"), (r"(?m-m).", "\n"), (r"(?C)(?<n>a)\k<n>", "aa"),
    (r"(?C)(a)", "a"), (r"(?I)(?i)k", "kK\u212a"), (r"(?CI)(?i)[\p{Lu}]", "aé"), (r"(?y{w})a", "a"),
    (r"(?#note)a(?#)", "aa"), (r"(?'n'a)\k<n>", "aa"),
    (r"\p{Extended_Pictographic}", "\u2605\u00a9a😀"), (r"\p{ExtPict}", "\u2605"), (r"\p{Diacritic}", "^\u05a2\u1d9b"),
    (r"\p{Dia}", "\u1d9b"),
]


@pytest.mark.parametrize(("pattern", "text"), ONIGURUMA_CASES)
@pytest.mark.parametrize("behavior", ["Isolated", "Removed"])
def test_oniguruma_construct(pattern: str, text: str, behavior: str) -> None:
    assert_same(split(pattern, behavior), text)


# What Oniguruma refuses, impl refuses too.
@pytest.mark.parametrize("pattern", ["(", "a)", "[a", r"\p{Nope}", r"\p{L&}", r"\p{sc=Latn}", "(?s).", "(?a)x",
                                     "[a--b]", "[[:nope:]]", "\\", "a(?C)b", "(?C)(?C)a", "(?-C)a", "(?-y{g})a",
                                     "(?y{x})a", "(?P<n>a)", r"(?C)(a)\1", "(?~a", "(?i"])
def test_invalid_oniguruma_pattern(pattern: str) -> None:
    node = split(pattern)
    with pytest.raises(Exception):
        oracle_tokenizer(node)
    with pytest.raises(TokenizerFileError) as caught:
        pre_tokenizer_from_json(node, WHERE)
    assert caught.value.where == f"{WHERE}.pattern.Regex"


# Oniguruma constructs the oracle accepts and no `regex` pattern matches exactly: impl refuses
# them, naming the pattern (see impl.tokenizer.patterns for why each is untranslatable).
@pytest.mark.parametrize("pattern", ["(?L)a|ab", r"(?y{w})\y", r"(?y{w})\X", "(?~|ab|(?<=x)a.)", "(?~|b|a(?=b))",
                                     r"(?~|c)(a)\1", "(?:(?~|c))a", "(?~a(?~b))", r"(?~|c)\R", r"(?~|(?i)a)"])
def test_untranslatable_oniguruma_pattern(pattern: str) -> None:
    node = split(pattern)
    oracle_tokenizer(node)
    with pytest.raises(TokenizerFileError, match="unsupported Oniguruma construct") as caught:
        pre_tokenizer_from_json(node, WHERE)
    assert caught.value.where == f"{WHERE}.pattern.Regex"


# Each newer construct over text from the alphabet it acts on: grapheme clusters (marks, emoji with
# modifiers and joiners, flags, Hangul jamo, CR LF, prepended and spacing marks), text an absent
# limits, and ASCII beside the non-ASCII letters, digits, spaces and case folds the options drop.
GRAPHEME_TEXT = "ae\u0301\u0308\u200d\u200c👨👩👍🏽🇦🇧🇨각각\r\n\t \u0600\u0903क्ष\u2605\u00a9\ufe0f\U0001faea"
OPTION_TEXT = "aAé_1٣²kK\u212aſs \xa0\t!¡$€"
NEW_CONSTRUCTS = [
    *((pattern, GRAPHEME_TEXT) for pattern in (r"\y", r"\Y", r"\X", r"\X\y", r"a\Y.", r"\p{ExtPict}+")),
    *((pattern, "abc x\n") for pattern in ("(?~abc)", r"(?~|ab|\w+)", r"(?~|b)\w+|.", r"(?~|c|a.*)", "(?~a|bc)")),
    *((pattern, OPTION_TEXT) for pattern in (r"(?W)\w+\b", r"(?P)[[:punct:]]+|[[:alpha:]]+|\s", r"(?iW)\w|[\W]",
                                            r"(?D)\d|(?S)\s", r"(?I)(?i)[ks]+", r"(?C)(.)(?i-i:a)")),
]


@pytest.mark.parametrize(("pattern", "alphabet"), NEW_CONSTRUCTS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_newer_oniguruma_constructs(pattern: str, alphabet: str, data: st.DataObject) -> None:
    assert_same(split(pattern), data.draw(short_text_leaning_on(alphabet)))


def test_corrected_properties_sweep() -> None:
    """The code points where Oniguruma's Extended_Pictographic and Diacritic are not the age rule's."""
    corrected = [cp for added, removed in unicode_age.ONIGURUMA_CORRECTIONS.values()
                 for first, last in (*added, *removed) for cp in range(first, last + 1)]
    for name in ("Extended_Pictographic", "Diacritic"):
        assert sweep_codepoints(split(rf"\p{{{name}}}"), sorted({*corrected, *SAMPLED_CODEPOINTS}))[:3] == []


# Contexts for grapheme boundaries: after a letter, a joiner, a pictograph and joiner, a flag, a
# Hangul L, CR and a Prepend; before a letter, a mark, a joiner, a spacing mark, a skin tone, LF.
GRAPHEME_PROBES = ("a{0}", "{0}a", "{0}{0}", "{0}\u0301", "{0}\u200d", "\u200d{0}", "👨\u200d{0}", "{0}\u200d👩",
                   "🇦{0}🇦", "ᄀ{0}ᅡ", "\r{0}\n", "{0}\u0903", "\u0600{0}", "{0}\U0001F3FD", "ᅡ{0}ᆨ")


def test_grapheme_boundary_sweep() -> None:
    """\\y around the code points of every grapheme break class but Other (a stride of them),
    the pictographs, and the corrected ones, against Oniguruma's tables."""
    special = regex.findall(r"[\P{Grapheme_Cluster_Break=Other}\p{Extended_Pictographic}]",
                            "".join(map(chr, SCALAR_VALUES)))
    corrected = [first for runs in unicode_age.ONIGURUMA_CORRECTIONS.values() for first, _ in (*runs[0], *runs[1])]
    codepoints = sorted({*map(ord, special[::5]), *corrected, *SAMPLED_CODEPOINTS[::4]})
    assert sweep_codepoints(split(r"\y"), codepoints, probes=GRAPHEME_PROBES)[:3] == []


@pytest.mark.parametrize("name", PUBLIC_PATTERNS)
@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_public_patterns(name: str, text: str) -> None:
    assert_same(split(PUBLIC_PATTERNS[name]), text)


def test_regex_tables_are_the_stamped_version() -> None:
    """impl.tokenizer.unicode_age lists what regex's tables add on the oracle's; newer tables add more."""
    assigned = len(SCALAR_VALUES) - len(regex.findall(r"\p{Cn}", "".join(map(chr, SCALAR_VALUES))))
    assert assigned == unicode_age.REGEX_ASSIGNED, (
        f"regex {regex.__version__} assigns {assigned} code points, not Unicode {unicode_age.REGEX_UNICODE}'s "
        f"{unicode_age.REGEX_ASSIGNED}: rerun tools/gen_unicode_age.py")


# -- faulty nodes ---------------------------------------------------------------------------------

FAULTY = [
    ("missing type", {"behavior": "Isolated"}, f"{WHERE}.type"),
    ("unknown type", {"type": "Nope"}, f"{WHERE}.type"),
    ("node not an object", "Whitespace", WHERE),
    ("invalid regex", split("(", "Removed"), f"{WHERE}.pattern.Regex"),
    ("unknown behavior", split(" ", "removed"), f"{WHERE}.behavior"),
    ("unknown Punctuation behavior", {"type": "Punctuation", "behavior": "Split"}, f"{WHERE}.behavior"),
    ("null Punctuation behavior", {"type": "Punctuation", "behavior": None}, f"{WHERE}.behavior"),
    ("missing invert", {"type": "Split", "pattern": {"String": " "}, "behavior": "Removed"}, f"{WHERE}.invert"),
    ("pattern not tagged", {"type": "Split", "pattern": " ", "behavior": "Removed", "invert": False},
     f"{WHERE}.pattern"),
    ("unknown pattern kind", split(" ", kind="Glob"), f"{WHERE}.pattern"),
    ("missing trim_offsets", {"type": "ByteLevel", "add_prefix_space": True}, f"{WHERE}.trim_offsets"),
    ("null add_prefix_space", {"type": "ByteLevel", "add_prefix_space": None, "trim_offsets": True},
     f"{WHERE}.add_prefix_space"),
    ("missing replacement", {"type": "Metaspace"}, f"{WHERE}.replacement"),
    ("replacement of two characters", metaspace(replacement="ab"), f"{WHERE}.replacement"),
    ("unknown prepend_scheme", metaspace("First"), f"{WHERE}.prepend_scheme"),
    ("add_prefix_space against prepend_scheme", {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
     f"{WHERE}.add_prefix_space"),
    ("missing individual_digits", {"type": "Digits"}, f"{WHERE}.individual_digits"),
    ("individual_digits not a bool", {"type": "Digits", "individual_digits": "yes"}, f"{WHERE}.individual_digits"),
    ("missing delimiter", {"type": "CharDelimiterSplit"}, f"{WHERE}.delimiter"),
    ("missing pretokenizers", {"type": "Sequence"}, f"{WHERE}.pretokenizers"),
    ("fault deep in a sequence", sequence(sequence({"type": "Whitespace"}, split("[", "Isolated"))),
     f"{WHERE}.pretokenizers[0].pretokenizers[1].pattern.Regex"),
]


@pytest.mark.parametrize(("node", "path"), [(node, path) for _, node, path in FAULTY], ids=[f[0] for f in FAULTY])
def test_faulty_node_is_refused_with_its_path(node: dict, path: str) -> None:
    assert_refused_by_both(lambda: oracle_tokenizer(node), lambda: pre_tokenizer_from_json(node, WHERE), path)


def test_unsupported_type_names_what_is_supported() -> None:
    with pytest.raises(TokenizerFileError) as caught:
        pre_tokenizer_from_json(sequence({"type": "Bogus"}), WHERE)
    assert caught.value.where == f"{WHERE}.pretokenizers[0].type"
    assert "unsupported pre-tokenizer type 'Bogus'" in str(caught.value)


def test_compile_pattern_names_the_regex_node() -> None:
    with pytest.raises(TokenizerFileError) as caught:
        compile_pattern({"Regex": "(?<"}, "tokenizer.json: $.normalizer.pattern")
    assert caught.value.where == "tokenizer.json: $.normalizer.pattern.Regex"


# -- real tokenizer.json files --------------------------------------------------------------------



@functools.lru_cache(maxsize=None)
def real_pre_tokenizer(path: Path) -> dict | None:
    return json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))["pre_tokenizer"]


def real_node_or_skip(path: Path) -> dict:
    node = real_pre_tokenizer(path)
    if node is None:
        assert pre_tokenizer_from_json(node, WHERE) is None
        pytest.skip(f"{path.name} has no pre-tokenizer")
    return node


@pytest.mark.parametrize("path", SHARED_MODEL_DIRS)
def test_real_pre_tokenizer_matches_tokenizers(path: Path) -> None:
    node = real_node_or_skip(path)

    @settings(max_examples=100, deadline=None)
    @given(text=texts)
    def check(text: str) -> None:
        assert_same(node, text)

    check()


@pytest.mark.parametrize("path", SHARED_MODEL_DIRS)
def test_real_pre_tokenizer_sampled_sweep(path: Path) -> None:
    node = real_node_or_skip(path)
    assert sweep_codepoints(node, SAMPLED_CODEPOINTS)[:3] == []


def main() -> int:
    """Sweep every code point through the class-dependent nodes and each real file's pre-tokenizer."""
    nodes = SWEPT + [real_pre_tokenizer(p.values[0]) for p in SHARED_MODEL_DIRS
                      if p.values[0] is not None and real_pre_tokenizer(p.values[0])]
    failed = 0
    for node in nodes:
        divergences = sweep_codepoints(node)
        failed += bool(divergences)
        print(f"{len(divergences):7d} divergences  {node_id(node)}", *map(repr, divergences[:3]), sep="\n    ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
