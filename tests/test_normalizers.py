"""impl.tokenizer.normalizers against the normalizers of `tokenizers`, built from the same JSON node.

Both sides load each normalizer node and normalize the same texts: Hypothesis text from every
plane and category, a sweep of code points wrapped in combining and Hangul contexts, and the
normalizers of real tokenizer.json files. Faulty nodes must be refused, naming the JSON path.

``sweep`` checks any set of code points; pytest runs it on a sample, and
``python -m tests.test_normalizers`` runs it on every code point (about half an hour).
"""
from __future__ import annotations

import base64
import functools
import json
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import regex
import tokenizers
from hypothesis import given, settings

from textbound.impl.tokenizer import unicode_tables
from textbound.impl.errors import TokenizerFileError
from textbound.impl import Tokenizer
from textbound.impl.tokenizer.normalizers import NORMALIZERS, normalizer_from_json
from tests.families import SHARED_MODEL_DIRS
from textbound.corpora.charsmaps import sentencepiece_charsmap
from tests.stage_oracle import assert_refused_by_both, oracle_with, short_text_leaning_on

WHERE = "tokenizer.json: $.normalizer"


def bert(clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool | None = None,
         lowercase: bool = True) -> dict:
    return {"type": "BertNormalizer", "clean_text": clean_text, "handle_chinese_chars": handle_chinese_chars,
            "strip_accents": strip_accents, "lowercase": lowercase}


def replace(kind: str, pattern: str, content: str) -> dict:
    return {"type": "Replace", "pattern": {kind: pattern}, "content": content}


def strip(left: bool, right: bool) -> dict:
    return {"type": "Strip", "strip_left": left, "strip_right": right}


NODES = [
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"},
    {"type": "Lowercase"}, {"type": "StripAccents"}, {"type": "ByteLevel"}, {"type": "Nmt"},
    strip(True, True), strip(True, False), strip(False, True), strip(False, False),
    {"type": "Prepend", "prepend": "▁"}, {"type": "Prepend", "prepend": " "},
    replace("String", " ", "▁"), replace("String", "''", '"'), replace("String", "", "X"),
    replace("String", ".*", "dot-star"), replace("Regex", " {2,}", " "), replace("Regex", "x*", "-"),
    replace("Regex", "(?=a)|b", "_"), replace("Regex", r"\s+", " "),
    bert(), bert(lowercase=False), bert(strip_accents=True, lowercase=False), bert(strip_accents=False),
    bert(clean_text=False, handle_chinese_chars=False), {"type": "Bert", "clean_text": True,
                                                         "handle_chinese_chars": False, "lowercase": False},
    {"type": "Sequence", "normalizers": []},
    # Llama 2's normalizer, and BERT-style accent stripping built from parts.
    {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, replace("String", " ", "▁")]},
    {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"},
                                         {"type": "NFC"}]},
    {"type": "Sequence", "normalizers": [{"type": "NFKC"}, strip(True, True), {"type": "Lowercase"}]},
]


def precompiled(rule: str) -> dict:
    return {"type": "Precompiled",
            "precompiled_charsmap": base64.b64encode(sentencepiece_charsmap(rule)).decode("ascii")}


NODES += [precompiled("nmt_nfkc"), precompiled("nfkc_cf"),
          {"type": "Sequence", "normalizers": [precompiled("nmt_nfkc"), replace("Regex", " {2,}", " ")]}]


def node_id(node: dict) -> str:
    # A charsmap is 300 kB of base64: its first characters stand for it.
    return regex.sub(r'("precompiled_charsmap": "[^"]{8})[^"]*', r"\1…", json.dumps(node, ensure_ascii=False))


def oracle_tokenizer(normalizer: dict | None) -> tokenizers.Tokenizer:
    return oracle_with("normalizer", normalizer)


@functools.lru_cache(maxsize=None)
def oracle_normalize_str(node_json: str):
    return oracle_tokenizer(json.loads(node_json)).normalizer.normalize_str


@functools.lru_cache(maxsize=None)
def impl_normalize(node_json: str):
    return normalizer_from_json(json.loads(node_json), WHERE).normalize


def assert_same(node: dict, text: str) -> None:
    key = json.dumps(node)
    assert impl_normalize(key)(text) == oracle_normalize_str(key)(text), f"input {text!r}"


# Contexts for a code point c: alone; after a letter it may compose with; before marks of the
# highest (240) and lowest (1) combining class, which it must be reordered with exactly when its
# own class is not 0; and Hangul jamo/syllable neighbours (L+V, LV+T composition); and spaces.
PROBES = ("{}", "e{}", "{}\u0301", "{}\u0334", "\u0345{}", "\u1100{}", "\uac00{}", "{}\u11a8", " {} ")
SCALAR_VALUES = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def sweep(node: dict, codepoints: Iterable[int]) -> list[tuple[str, str, str]]:
    """(input, oracle output, impl output) for every probe of ``codepoints`` where they differ."""
    key = json.dumps(node)
    oracle, impl = oracle_normalize_str(key), impl_normalize(key)
    return [
        (text, expected, actual)
        for cp in codepoints
        for text in (probe.format(chr(cp)) for probe in PROBES)
        if (expected := oracle(text)) != (actual := impl(text))
    ]


# Every code point below U+0800 (Latin to NKo, dense with marks), then a prime stride.
SAMPLED_CODEPOINTS = [*range(0x800), *SCALAR_VALUES[0x800::2477]]


@pytest.mark.parametrize("node", NODES, ids=node_id)
def test_sampled_codepoint_sweep(node: dict) -> None:
    assert sweep(node, SAMPLED_CODEPOINTS)[:5] == []


# Code points whose answers hinge on Unicode versions: unassigned in the oracle's normalization
# tables (Unicode 9.0) but marks or decomposable now, lowercase pairs newer than Python 3.11's
# unicodedata, a general category that changed, and Rust-only or Python-only whitespace.
VERSION_SENSITIVE = [
    0x1DF6, 0x10D24, 0x1E130, 0x11938, 0x1F16C, 0x32FF, 0xA7F2, 0xAB69, 0x1FBF0, 0x107A5,
    0x1C89, 0xA7CB, 0xA7DC, 0x10D50, 0x16EA0, 0x130, 0x3A3, 0x1CF2, 0x1CF3,
    0x1C, 0x1F, 0x85, 0xA0, 0x180E, 0x200B, 0x2028, 0xFEFF, 0x3000,
]


@pytest.mark.parametrize("node", NODES, ids=node_id)
def test_version_sensitive_codepoints(node: dict) -> None:
    assert sweep(node, VERSION_SENSITIVE) == []


# Characters that make normalizers work: combining marks of many classes, Hangul jamo and
# syllables, characters newer than the oracle's tables, whitespace, CJK, casing specials.
INTERESTING = (
    "aeAEoOsSıIİΣσς \t\n\r\x0b\x1c\x85\xa0\u1680\u2028\u3000\u200b\ufeff\ufffd\x00\x01\xad"
    "\u0301\u0316\u0334\u0345\u0308\u0327\u05b0\u0e49\u0f71\u0f72\u0f73\u1df6\u20d2\U00010d24\U0001e130"
    "\u1100\u1112\u1161\u1175\u11a7\u11a8\u11c2\uac00\uac01\ud7a3\u3131"
    "\U00011935\U00011930\U0001f16c\u32ff\ua7f2\ufb01\u2460\u00bd\u2126\u212b\u1e9b\u0344"
    "中文字\U00020000\uf900々〆\u1cf2\u1c89\ua7cb\U00010d50'x ▁"
)
texts = short_text_leaning_on(INTERESTING)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_normalize_matches_tokenizers(node: dict, text: str) -> None:
    assert_same(node, text)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@pytest.mark.parametrize("text", [
    "", " ", "  ", "▁", " a", "a ", "\u3000 a\t\n", "''x''", "xx", "ax", "a\u0301", "e\u0304\u0304\u0304o",
    "ậ…", "ำน\u0e49ำ3ลำ", "\u1100\u1161\u11a8", "\uac00\u11a7", "Σ", "ΑΣ", "İ", "ẞ", "\U0001f600", "中a",
])
def test_edge_cases(node: dict, text: str) -> None:
    assert_same(node, text)


def test_unicode_tables_were_measured_from_this_oracle() -> None:
    """Else rerun tools/gen_unicode_tables.py: the oracle's Unicode answers may have moved."""
    assert unicode_tables.ORACLE_VERSION == f"tokenizers {tokenizers.__version__}"


def test_every_supported_type_is_tested() -> None:
    assert set(NORMALIZERS) == {node["type"] for node in NODES} - {"BertNormalizer"}


def test_null_normalizer_is_none() -> None:
    assert normalizer_from_json(None, WHERE) is None


FAULTY = [
    ("missing type", {"lowercase": True}, f"{WHERE}.type"),
    ("unit type without type", {}, f"{WHERE}.type"),
    ("given as an array", [{"type": "NFC"}], WHERE),
    ("nested array", {"type": "Sequence", "normalizers": [[{"type": "NFC"}]]}, f"{WHERE}.normalizers[0]"),
    ("unknown type, no fields", {"type": "Foo"}, f"{WHERE}.type"),
    ("type not a string", {"type": 3}, f"{WHERE}.type"),
    ("node not an object", "NFC", WHERE),
    ("missing strip_right", {"type": "Strip", "strip_left": True}, f"{WHERE}.strip_right"),
    ("strip_left not a bool", {"type": "Strip", "strip_left": "yes", "strip_right": True}, f"{WHERE}.strip_left"),
    ("missing content", {"type": "Replace", "pattern": {"String": "a"}}, f"{WHERE}.content"),
    ("missing pattern", {"type": "Replace", "content": "a"}, f"{WHERE}.pattern"),
    ("bad regex", replace("Regex", "(", ""), f"{WHERE}.pattern.Regex"),
    ("prepend not a string", {"type": "Prepend", "prepend": 1}, f"{WHERE}.prepend"),
    ("missing lowercase", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True},
     f"{WHERE}.lowercase"),
    ("missing normalizers", {"type": "Sequence"}, f"{WHERE}.normalizers"),
    ("null in a sequence", {"type": "Sequence", "normalizers": [{"type": "NFC"}, None]}, f"{WHERE}.normalizers[1]"),
    ("fault deep in a sequence",
     {"type": "Sequence", "normalizers": [{"type": "Sequence", "normalizers": [{"type": "Prepend"}]}]},
     f"{WHERE}.normalizers[0].normalizers[0].prepend"),
]


@pytest.mark.parametrize(("node", "path"), [(node, path) for _, node, path in FAULTY], ids=[f[0] for f in FAULTY])
def test_faulty_node_is_refused_with_its_path(node: dict, path: str) -> None:
    assert_refused_by_both(lambda: oracle_tokenizer(node), lambda: normalizer_from_json(node, WHERE), path)


def charsmap(trie: list[int], replacements: bytes) -> str:
    return base64.b64encode(struct.pack(f"<I{len(trie)}I", 4 * len(trie), *trie) + replacements).decode()


# The oracle panics on each (tokenizers unwraps the charsmap's parse); impl refuses the file.
CORRUPT_CHARSMAPS = [
    ("not base64", "!!", "not base64"),
    ("empty", "", "too short to hold the trie's size"),
    ("trie longer than the map", base64.b64encode(struct.pack("<I", 8)).decode(), "only 0 follow it"),
    ("replacements not UTF-8", charsmap([0], b"\xff"), "not UTF-8"),
]


@pytest.mark.parametrize(("encoded", "message"), [case[1:] for case in CORRUPT_CHARSMAPS],
                         ids=[case[0] for case in CORRUPT_CHARSMAPS])
def test_corrupt_charsmap_is_refused(encoded: str, message: str) -> None:
    node = {"type": "Precompiled", "precompiled_charsmap": encoded}
    assert_refused_by_both(lambda: oracle_tokenizer(node), lambda: normalizer_from_json(node, WHERE),
                           f"{WHERE}.precompiled_charsmap", message)


def test_charsmap_pointing_outside_itself_fails_when_used() -> None:
    """A trie whose units lead past its end: the oracle panics on the first lookup, impl raises."""
    node = {"type": "Precompiled", "precompiled_charsmap": charsmap([1 << 10], b"")}
    impl = normalizer_from_json(node, WHERE)
    with pytest.raises(BaseException):
        oracle_tokenizer(node).normalizer.normalize_str("a")
    with pytest.raises(ValueError, match="points past its end"):
        impl.normalize("a")


@pytest.mark.parametrize("text", ["\x01a b", "\u200b a", "a", "\x01"])
def test_metaspace_first_after_precompiled_deletes_the_first_character(text: str) -> None:
    """nmt_nfkc deletes U+0001; the oracle still counts what follows as the text's start."""
    spec = {"version": "1.0", "normalizer": precompiled("nmt_nfkc"),
            "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "▁a": 1, "a": 2, "▁b": 3}, "unk_token": "[UNK]"}}
    expected = tokenizers.Tokenizer.from_str(json.dumps(spec)).encode(text).ids
    assert Tokenizer.from_str(json.dumps(spec)).encode(text, add_special_tokens=False) == expected


# Nodes whose "type" names no normalizer (or is missing): the oracle reads those with fields by
# shape, whatever their "type" says.
UNTAGGED = [
    ({"clean_text": True, "handle_chinese_chars": False, "strip_accents": None, "lowercase": True}, "BertNormalizer"),
    ({"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True, "lowercase": False},
     "BertNormalizer"),
    ({"type": "Foo", "strip_left": True, "strip_right": False}, "Strip"),
    ({"type": None, "normalizers": [{"type": "Lowercase"}]}, "Sequence"),
    ({"pattern": {"String": "a"}, "content": "b", "type": 3}, "Replace"),
    ({"prepend": "▁"}, "Prepend"),
    ({"type": "Sequence", "normalizers": [{"prepend": "x"}, {"strip_left": True, "strip_right": True}]}, "Sequence"),
]


@pytest.mark.parametrize(("node", "kind"), UNTAGGED, ids=[json.dumps(n) for n, _ in UNTAGGED])
def test_untagged_node_is_read_by_shape(node: dict, kind: str) -> None:
    oracle = oracle_tokenizer(node).normalizer
    impl = normalizer_from_json(node, WHERE)
    assert type(impl).__name__ == kind
    for text in ["  aÅ Σ b中  ", "abc"]:
        assert impl.normalize(text) == oracle.normalize_str(text)


@functools.lru_cache(maxsize=None)
def real_normalizers(path: Path) -> tuple:
    """impl's and the oracle's normalizer of a real file (None when it has none)."""
    node = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))["normalizer"]
    return normalizer_from_json(node, WHERE), tokenizers.Tokenizer.from_file(str(path / "tokenizer.json")).normalizer


@pytest.mark.parametrize("path", SHARED_MODEL_DIRS)
@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_real_normalizer_matches_tokenizers(path: Path, text: str) -> None:
    impl, oracle = real_normalizers(path)
    assert (impl is None) == (oracle is None)
    if impl is not None:
        assert impl.normalize(text) == oracle.normalize_str(text), f"input {text!r}"


def main() -> int:
    """Sweep every code point through every tested node; print the first mismatches of each."""
    failed = 0
    for node in NODES:
        mismatches = sweep(node, SCALAR_VALUES)
        failed += bool(mismatches)
        print(f"{len(mismatches):7d} mismatches  {node_id(node)}", *map(repr, mismatches[:3]), sep="\n    ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())


@pytest.mark.parametrize("pattern", [r"(?<n>a|b)\g<n>", r"(?<n>a|b\g<n>c)", r"(a|b)\g<1>", r"(a|b)(c)\g<-1>"])
def test_subexpression_calls_rerun_the_group(pattern: str) -> None:
    """Oniguruma's \\g<name> matches the group's pattern again, not the text it matched."""
    for text in ["ab aa ba bc abbacc abc xx", "abcc"]:
        assert_same(replace("Regex", pattern, "|"), text)


@pytest.mark.parametrize("pattern", [r"a\yb", r"\Y", r"(?~abc)", r"(?W)\w", r"(?y{g})\X"])
def test_text_segments_absents_and_ascii_options_replace_as_the_oracle(pattern: str) -> None:
    for text in ["ab xabcab abab", "e\u0301\U0001F468\u200D\U0001F469 \u00E9t\u00E9\r\n", ""]:
        assert_same(replace("Regex", pattern, "|"), text)


@pytest.mark.parametrize("pattern", [r"(?L)a|ab", r"(?y{w})\X"])
def test_oniguruma_features_impl_lacks_are_refused(pattern: str) -> None:
    """The longest-match option and word segments: the oracle takes them, impl refuses the file,
    naming the pattern."""
    node = replace("Regex", pattern, "|")
    oracle_tokenizer(node)
    with pytest.raises(TokenizerFileError) as refused:
        normalizer_from_json(node, WHERE)
    assert refused.value.where == f"{WHERE}.pattern.Regex"
