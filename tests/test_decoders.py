"""impl.tokenizer.decoders against the decoders of `tokenizers`, built from the same JSON node.

Every decoder node is loaded by both sides and fed the same token lists; the texts must agree,
and where tokenizers panics (Strip on too-short tokens) impl must raise DecoderPanic. Faulty
nodes must be refused by both, impl naming the JSON path.
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.impl.tokenizer.byte_level import bytes_to_chars
from textbound.impl.tokenizer.decoders import DECODERS, DecoderPanic, decoder_from_json
from tests.families import SHARED_MODEL_DIRS
from tests.stage_oracle import assert_refused_by_both, oracle_with

os.environ.setdefault("RUST_BACKTRACE", "0")  # keep expected panics short in captured output

WHERE = "tokenizer.json: $.decoder"


def oracle_tokenizer(decoder: dict | None) -> tokenizers.Tokenizer:
    return oracle_with("decoder", decoder)


@functools.lru_cache(maxsize=None)
def _oracle_decoder(node_json: str):
    return oracle_tokenizer(json.loads(node_json)).decoder


def oracle_decode(node: dict, tokens: list[str]) -> str | type:
    """The decoded text, or DecoderPanic when tokenizers panics."""
    try:
        return _oracle_decoder(json.dumps(node)).decode(tokens)
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        return DecoderPanic


def impl_decode(node: dict, tokens: list[str]) -> str | type:
    decoder = decoder_from_json(node, WHERE)
    try:
        return decoder.decode(tokens)
    except DecoderPanic:
        return DecoderPanic


def assert_same_decode(node: dict, tokens: list[str]) -> None:
    assert impl_decode(node, tokens) == oracle_decode(node, tokens), tokens


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
LLAMA2_STYLE = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0},
]}
NODES = [
    BYTE_LEVEL,
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": None, "split": None},
    {"type": "Metaspace", "replacement": "a", "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "Replace", "pattern": {"String": "##"}, "content": ""},
    {"type": "Replace", "pattern": {"String": ""}, "content": "-"},
    {"type": "Replace", "pattern": {"Regex": "a*"}, "content": "X"},
    {"type": "Replace", "pattern": {"Regex": "\\s+|b?"}, "content": "_"},
    {"type": "ByteFallback"},
    {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    {"type": "Strip", "content": "a", "start": 2, "stop": 1},
    {"type": "Strip", "content": "▁", "start": 0, "stop": 3},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "BPEDecoder", "suffix": ""},
    {"type": "WordPiece", "prefix": "##", "cleanup": True},
    {"type": "WordPiece", "prefix": "##", "cleanup": False},
    {"type": "WordPiece", "prefix": "", "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": False},
    {"type": "CTC", "pad_token": "a", "word_delimiter_token": "", "cleanup": True},
    LLAMA2_STYLE,
    {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁"}]},
    {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Metaspace", "replacement": "▁"}, BYTE_LEVEL]},
    {"type": "Sequence", "decoders": []},
]

# Pieces that trigger the decoders' special cases; tokens are drawn from them and from any text.
PIECES = [
    "▁", "▁▁", " ", "  ", "a", "aa", "b", "é", "😀", "Ġ", "Ċ", "ĠĠ", "Ã©", "ðŁĺ", "Ģ",
    "##", "##a", "</w>", "a</w>", "<pad>", "|", "'s", " .", ".", " n't", " do not", " ' ",
    "<0x41>", "<0x61>", "<0xE2>", "<0x82>", "<0xAC>", "<0xC3>", "<0xA9>", "<0xff>", "<0xED>",
    "<0xA0>", "<0x80>", "<0x+A>", "<0x-1>", "<0xé>", "<0xG1>", "<0x0A", "<0x 1>", "<s>",
]
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
token = st.one_of(st.sampled_from(PIECES), st.lists(st.sampled_from(PIECES), max_size=3).map("".join), any_text)
token_lists = st.lists(token, max_size=8)


def node_id(node: dict) -> str:
    return json.dumps(node, ensure_ascii=False)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@settings(max_examples=40, deadline=None)
@given(tokens=token_lists)
def test_decode_matches_tokenizers(node: dict, tokens: list[str]) -> None:
    assert_same_decode(node, tokens)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@pytest.mark.parametrize("tokens", [[], [""], ["", ""], ["▁▁"], ["a", "▁▁"], ["▁▁", "▁▁"], ["a"], ["aa"]])
def test_edge_cases(node: dict, tokens: list[str]) -> None:
    assert_same_decode(node, tokens)


byte_level_tokens = st.lists(
    st.one_of(st.binary(max_size=5).map(bytes_to_chars), st.sampled_from(["<|im_end|>", "é", "a\u0100"])),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(tokens=byte_level_tokens)
def test_byte_level_lossy_utf8(tokens: list[str]) -> None:
    """Bytes split anywhere, plus tokens outside the alphabet (added tokens) that stand for themselves."""
    assert_same_decode(BYTE_LEVEL, tokens)


# Invalid UTF-8 whose U+FFFD count depends on the replacement rule: surrogates, overlongs,
# code points past U+10FFFF, truncated and stray continuation bytes.
INVALID_UTF8 = [
    b"\xed\xa0\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80",
    b"\xf5\x80", b"\xff", b"\xe2\x82", b"\xf0\x9f\x98", b"\x80\x80", b"a\xe2\x82b", b"\xe2\x82\xe2\x82\xac",
]


@pytest.mark.parametrize("data", INVALID_UTF8, ids=repr)
def test_byte_level_invalid_utf8(data: bytes) -> None:
    assert_same_decode(BYTE_LEVEL, [bytes_to_chars(data)])
    assert_same_decode(BYTE_LEVEL, [bytes_to_chars(data[:1]), bytes_to_chars(data[1:])])


def byte_tokens(data: bytes, lower: bool) -> list[str]:
    return [f"<0x{b:02x}>" if lower else f"<0x{b:02X}>" for b in data]


@st.composite
def byte_fallback_tokens(draw: st.DrawFn) -> list[str]:
    """Runs of byte tokens, valid UTF-8 or not, between ordinary tokens."""
    tokens: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        data = draw(st.one_of(st.binary(max_size=5), any_text.map(str.encode), st.sampled_from(INVALID_UTF8)))
        tokens += byte_tokens(data, draw(st.booleans()))
        tokens += draw(st.lists(token, max_size=2))
    return tokens


@settings(max_examples=300, deadline=None)
@given(tokens=byte_fallback_tokens())
def test_byte_fallback_runs(tokens: list[str]) -> None:
    assert_same_decode({"type": "ByteFallback"}, tokens)
    assert_same_decode(LLAMA2_STYLE, tokens)


def test_added_token_of_replacements_decodes_to_spaces() -> None:
    """An added token "▁▁" goes through the Metaspace decoder like any other token."""
    spec = json.loads(oracle_tokenizer(None).to_str())
    spec["model"]["vocab"]["▁a"] = 1
    spec["added_tokens"] = [{"id": 2, "content": "▁▁", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": False}]
    spec["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}
    oracle = tokenizers.Tokenizer.from_str(json.dumps(spec))
    decoder = decoder_from_json(spec["decoder"], WHERE)
    for ids in ([1, 2, 1], [2, 1], [1, 2, 2]):
        tokens = [oracle.id_to_token(i) for i in ids]
        assert None not in tokens
        assert decoder.decode(tokens) == oracle.decode(ids)


def test_every_decoder_type_is_exercised() -> None:
    assert {node["type"] for node in NODES} == DECODERS.keys()


# ---- faulty nodes ----------------------------------------------------------------------------

BAD_NODES = [
    ({"type": "Nope"}, f"{WHERE}.type", "unsupported decoder type 'Nope'"),
    ({"decoders": []}, f"{WHERE}.type", "required field is missing"),
    ({}, f"{WHERE}.type", "required field is missing"),
    ([{"type": "Fuse"}], WHERE, "expected an object"),
    ({"type": "Foo", "replacement": "▁"}, f"{WHERE}.type", "unsupported decoder type 'Foo'"),
    ({"type": "BPEDecoder"}, f"{WHERE}.suffix", "required field is missing"),
    ({"type": "ByteLevel"}, f"{WHERE}.add_prefix_space", "required field is missing"),
    ({"type": "ByteLevel", "add_prefix_space": 1, "trim_offsets": True}, f"{WHERE}.add_prefix_space", "expected bool"),
    ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": "yes"},
     f"{WHERE}.use_regex", "expected bool"),
    ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": None},
     f"{WHERE}.use_regex", "expected bool"),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": None}, f"{WHERE}.prepend_scheme", "expected str"),
    ({"type": "Metaspace"}, f"{WHERE}.replacement", "required field is missing"),
    ({"type": "Metaspace", "replacement": "ab"}, f"{WHERE}.replacement", "single character"),
    ({"type": "Metaspace", "replacement": ""}, f"{WHERE}.replacement", "single character"),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "First"}, f"{WHERE}.prepend_scheme", "'First'"),
    ({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False}, f"{WHERE}.add_prefix_space", "contradicts"),
    ({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "first"},
     f"{WHERE}.add_prefix_space", "contradicts"),
    ({"type": "Replace", "content": " "}, f"{WHERE}.pattern", "required field is missing"),
    ({"type": "Replace", "pattern": {"String": "a"}}, f"{WHERE}.content", "required field is missing"),
    ({"type": "Replace", "pattern": {"Glob": "a"}, "content": ""}, f"{WHERE}.pattern", "unknown pattern kind"),
    ({"type": "Strip", "content": "ab", "start": 1, "stop": 0}, f"{WHERE}.content", "single character"),
    ({"type": "Strip", "content": " ", "start": -1, "stop": 0}, f"{WHERE}.start", "non-negative"),
    ({"type": "Strip", "content": " ", "start": 1.0, "stop": 0}, f"{WHERE}.start", "expected int"),
    ({"type": "Strip", "content": " ", "start": 1}, f"{WHERE}.stop", "required field is missing"),
    ({"type": "WordPiece", "prefix": "##"}, f"{WHERE}.cleanup", "required field is missing"),
    ({"type": "CTC", "pad_token": "<pad>", "cleanup": True}, f"{WHERE}.word_delimiter_token", "required field"),
    ({"type": "Sequence"}, f"{WHERE}.decoders", "required field is missing"),
    ({"type": "Sequence", "decoders": [{"type": "Fuse"}, None]}, f"{WHERE}.decoders[1]", "expected an object"),
    ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip"}]},
     f"{WHERE}.decoders[1].content", "required field is missing"),
]


@pytest.mark.parametrize(("node", "path", "message"), BAD_NODES, ids=lambda v: node_id(v) if isinstance(v, dict) else "")
def test_faulty_node_is_refused_with_its_path(node: dict, path: str, message: str) -> None:
    assert_refused_by_both(lambda: oracle_tokenizer(node), lambda: decoder_from_json(node, WHERE), path, message)


# Nodes whose "type" names no decoder (or is missing): the oracle reads those with fields by shape.
BY_SHAPE = [
    ({"suffix": "</w>"}, "BPEDecoder"),
    ({"type": "Foo", "prefix": "##", "cleanup": True}, "WordPiece"),
    ({"type": None, "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": False}, "CTC"),
    ({"pattern": {"String": "▁"}, "content": " "}, "Replace"),
    ({"type": 3, "content": " ", "start": 1, "stop": 0}, "Strip"),
]


@pytest.mark.parametrize(("node", "kind"), BY_SHAPE, ids=[node_id(node) for node, _ in BY_SHAPE])
def test_decoder_chosen_by_shape(node: dict, kind: str) -> None:
    oracle = oracle_tokenizer(node)
    decoder = decoder_from_json(node, WHERE)
    assert type(decoder).__name__ == json.loads(oracle.to_str())["decoder"]["type"] == kind
    tokens = ["a</w>", "##b", "<pad>", "<pad>", "|", "▁c", " d"]
    assert decoder.decode(tokens) == oracle.decoder.decode(tokens)


def test_null_decoder_is_none() -> None:
    assert decoder_from_json(None, WHERE) is None


# ---- the decoders of real tokenizer.json files ----------------------------------------------



@functools.lru_cache(maxsize=None)
def real_tokenizer(path: Path) -> tuple[tokenizers.Tokenizer, dict, list[int]]:
    """The oracle, the parsed file and every id it knows (added tokens included)."""
    spec = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    oracle = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    return oracle, spec, sorted(oracle.get_vocab(with_added_tokens=True).values())


@pytest.mark.parametrize("path", SHARED_MODEL_DIRS)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_real_decoder_matches_tokenizers(path: Path, data: st.DataObject) -> None:
    oracle, spec, known_ids = real_tokenizer(path)
    # Indices rather than sampled_from: Hypothesis labels a sampled_from by its whole list.
    ids = [known_ids[i] for i in data.draw(st.lists(st.integers(0, len(known_ids) - 1), max_size=12))]
    tokens = [oracle.id_to_token(i) for i in ids]
    decoder = decoder_from_json(spec["decoder"], WHERE)
    assert decoder.decode(tokens) == oracle.decoder.decode(tokens)
