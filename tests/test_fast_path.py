"""impl's fast paths give the ids of its general ones, and a broken fast path is caught.

The fast paths (impl.tokenizer.tokenizer._FastPath, BPE.tokenize_batch, BPE.chunks, the scanning merge, the
bulk loading of merges, match_spans' finditer, Replace's str.replace) each stand beside the slower
code they replace, which stays reachable: ``Tokenizer.fast_paths = False`` encodes every text through
the general pipeline, and each stage's slow path is called directly here. The general path itself is
checked against the oracle by the stage and property tests.
"""
from __future__ import annotations

import functools
import json
import string

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from textbound.impl import Tokenizer
from textbound.impl.tokenizer import models, piece_cache
from textbound.impl.tokenizer.byte_level import BYTE_TO_CHAR, bytes_to_chars
from textbound.impl.errors import TokenizerFileError
from textbound.impl.tokenizer.models import BPE, NO_RULE, _merge_ids, _merge_pairs_from_json, _merge_rules, _packed_rules
from textbound.impl.tokenizer.normalizers import Replace
from textbound.impl.tokenizer.patterns import FLAGS, _spans_searched, compile_oniguruma, find_matches, match_spans
from textbound.impl.tokenizer.pre_tokenizers import (BEHAVIORS, GPT2_SPLIT, NUMERIC, PUNCTUATION, PUNCTUATION_ALONE,
                                           WHITESPACE_PATTERN, WORDS_OR_SYMBOLS, ByteLevel, CharDelimiterSplit, Digits,
                                           Metaspace, Piece, Punctuation, Split, WhitespaceSplit, _contiguous,
                                           _isolated, _merged_with_next, _removed, cut, cut_isolated, cut_removed,
                                           isolated_pieces)
from textbound.properties.strategies import unicode_text
from tests.families import BPE_FAMILIES, FAMILIES, UNIGRAM_FAMILIES, family_path

EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WHERE = "tokenizer.json: $.model.merges"


@functools.cache
def tokenizers(family: str) -> tuple[Tokenizer, Tokenizer]:
    """The family's tokenizer with its fast paths, and one encoding everything the general way."""
    fast, general = Tokenizer.from_dir(family_path(family)), Tokenizer.from_dir(family_path(family))
    general.fast_paths = False
    return fast, general


def words_and_long_runs() -> st.SearchStrategy[str]:
    """Mixed text, several of them joined (so that a batch holds new and known pieces), and long
    words (the scanning merge's limit and the chunking of long pieces)."""
    long_word = st.tuples(st.text("ab▁ ", min_size=1, max_size=4), st.integers(10, 40)).map(lambda pair: pair[0] * pair[1])
    return st.one_of(unicode_text(), st.lists(st.one_of(unicode_text(4), long_word), max_size=6).map(" ".join))


def assert_fast_matches_general(fast: Tokenizer, general: Tokenizer, text: str) -> None:
    assert fast.encode(text, add_special_tokens=False) == general.encode(text, add_special_tokens=False), text
    assert fast.encode(text, add_special_tokens=True) == general.encode(text, add_special_tokens=True), text


@pytest.mark.parametrize("family", FAMILIES)
@EXAMPLES
@given(text=words_and_long_runs())
def test_fast_path_gives_the_general_paths_ids(family, text):
    assert_fast_matches_general(*tokenizers(family), text)


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_on_the_corpus(family):
    from textbound.corpora import text_files

    fast, general = tokenizers(family)
    for text in text_files().values():
        assert_fast_matches_general(fast, general, text)
    assert fast.encode_batch(list(text_files().values()), add_special_tokens=False) == [general.encode(t, add_special_tokens=False) for t in text_files().values()]


def test_byte_level_families_take_the_fast_path():
    # Otherwise the comparisons above would compare the general path with itself.
    for family in ("gpt2", "llama3", "qwen", "roberta"):
        assert tokenizers(family)[0]._fast_split() is not None, family


def test_a_broken_fast_path_is_caught(monkeypatch):
    fast, general = Tokenizer.from_dir(family_path("gpt2")), tokenizers("gpt2")[1]
    fast_path = fast._fast_split()
    monkeypatch.setattr(fast_path.raw_split, "pieces", lambda text: GPT2_SPLIT.findall(text)[:-1])
    with pytest.raises(AssertionError):
        assert_fast_matches_general(fast, general, "Hello there")


@pytest.mark.parametrize("enabled", [True, False])
def test_a_long_text_is_encoded_with_the_collector_paused_and_left_as_it_was(monkeypatch, enabled):
    import gc

    from textbound.impl.tokenizer.tokenizer import PAUSED_COLLECTOR_CHARS

    fast, general = tokenizers("gpt2")
    seen = []
    merged_joined = BPE._merged_joined
    monkeypatch.setattr(BPE, "_merged_joined", lambda *args: seen.append(gc.isenabled()) or merged_joined(*args))
    text = " ".join(f"w{n}{enabled}" for n in range(PAUSED_COLLECTOR_CHARS // 4))  # words no cache holds
    (gc.enable if enabled else gc.disable)()
    try:
        assert_fast_matches_general(fast, general, text)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert seen and not any(seen)
    seen.clear()
    fast.encode(f"short new words: qzx{enabled} vbn", add_special_tokens=False)
    assert seen == [True]  # a short text is not worth the pause


def test_a_subclassed_stage_keeps_its_own_behaviour():
    class NoPrefix(ByteLevel):  # as a mutant re-classes a stage
        def split(self, piece):
            return super().split(Piece(piece.text.lstrip(" "), piece.at_start))

    tokenizer = Tokenizer.from_dir(family_path("gpt2"))
    assert tokenizer._fast_split() is not None
    tokenizer.pre_tokenizer.__class__ = NoPrefix
    assert tokenizer._fast_split() is None
    assert tokenizer.encode(" x", add_special_tokens=False) == tokenizer.encode("x", add_special_tokens=False)

    class Reversed(BPE):
        def tokenize(self, piece):
            return super().tokenize(piece)[::-1]

    tokenizer = Tokenizer.from_dir(family_path("gpt2"))
    tokenizer.model.__class__ = Reversed
    ids = BPE.tokenize(tokenizer.model, "understandable")
    assert len(ids) > 1 and tokenizer.encode("understandable", add_special_tokens=False) == ids[::-1]


def test_the_cache_stays_within_its_capacity(monkeypatch):
    monkeypatch.setattr(piece_cache, "CACHE_CAPACITY", 4)
    fast, general = Tokenizer.from_dir(family_path("gpt2")), tokenizers("gpt2")[1]
    many = "one two three four five six seven eight nine"  # more new pieces than the cache holds
    assert fast.encode(many, add_special_tokens=False) == general.encode(many, add_special_tokens=False)
    assert len(fast._fast_split().cache) == 4
    assert fast.encode("ten eleven one", add_special_tokens=False) == general.encode("ten eleven one", add_special_tokens=False)  # full: a new cache
    assert set(fast._fast_split().cache) == {"ten", " eleven", " one"}


# -- BPE ------------------------------------------------------------------------------------------

def bpe(family: str) -> BPE:
    """The family's BPE model (``family`` is one of BPE_FAMILIES)."""
    model = tokenizers(family)[0].model
    assert isinstance(model, BPE), f"{family} has a {type(model).__name__} model, not BPE"
    return model


def model_pieces(tokenizer: Tokenizer, text: str) -> list[str]:
    """The pieces the model gets for ``text`` (the general pipeline's, added tokens left in)."""
    if tokenizer.normalizer is not None:
        text = tokenizer.normalizer.normalize(text)
    pieces = [Piece(text, True)]
    if tokenizer.pre_tokenizer is not None:
        pieces = tokenizer.pre_tokenizer.pre_tokenize(pieces)
    return [piece.text for piece in pieces]


@pytest.mark.parametrize("family", BPE_FAMILIES)
@EXAMPLES
@given(text=words_and_long_runs(), extra=st.lists(st.text(max_size=6), max_size=4))
def test_tokenize_batch_is_tokenize_of_each(family, text, extra):
    model = bpe(family)
    pieces = model_pieces(tokenizers(family)[0], text) + extra
    assert model.tokenize_batch(pieces) == [model.tokenize(piece) for piece in pieces]


@pytest.mark.parametrize("family", BPE_FAMILIES)
@EXAMPLES
@given(text=words_and_long_runs())
def test_tokenize_all_is_tokenize_of_each_joined(family, text):
    # Each side from an empty cache, so that neither reads what the other one merged.
    model = bpe(family)
    pieces = [piece for piece in model_pieces(tokenizers(family)[0], text) if piece]
    model._cache.clear()
    expected = [token_id for piece in pieces for token_id in model.tokenize(piece)]
    model._cache.clear()
    assert model.tokenize_all(pieces) == expected


@pytest.mark.parametrize("family", BPE_FAMILIES)
@EXAMPLES
@given(text=words_and_long_runs())
def test_scanning_and_queued_merges_agree(family, text):
    model = bpe(family)
    for piece in model_pieces(tokenizers(family)[0], text):
        symbols = model._symbols(piece)
        if len(symbols) >= 2:
            rules = [model.merges.get(models.pair_key(*pair), models.NO_RULE) for pair in zip(symbols, symbols[1:])]
            assert model._merge_by_scan(symbols, rules, [len(symbols)], longest=len(symbols)) \
                == [model._merge_by_queue(list(symbols))], piece


@pytest.mark.parametrize("family", BPE_FAMILIES)
@EXAMPLES
@given(text=st.lists(words_and_long_runs(), min_size=1, max_size=4).map(" ".join))
def test_chunked_long_pieces_merge_as_whole_ones(family, text):
    model = bpe(family)
    for piece in model_pieces(tokenizers(family)[0], text * 3):
        symbols = model._symbols(piece)
        if len(symbols) < 2 or model.merges_dropped or model.ignore_merges and piece in model.vocab:
            continue
        assert model.tokenize(piece) == model._merge_by_queue(symbols), piece


@functools.cache
def oracle(family: str):
    from tokenizers import Tokenizer as OracleTokenizer

    return OracleTokenizer.from_file(str(family_path(family) / "tokenizer.json"))


def new_words() -> st.SearchStrategy[str]:
    """Words no cache has seen: 3 to 12 random lowercase letters as in the bench's random-words
    text, some capitalized, some with letters of other scripts and an emoji (several bytes each)."""
    lowercase = st.text(string.ascii_lowercase, min_size=3, max_size=12)
    mixed = st.text(string.ascii_letters + "éßøçñ中文ж😀'▁", min_size=1, max_size=12)
    return st.lists(st.one_of(lowercase, lowercase.map(str.capitalize), mixed), min_size=1, max_size=40).map(" ".join)


@pytest.mark.parametrize("family", BPE_FAMILIES)
@EXAMPLES
@given(text=new_words())
def test_new_words_get_the_oracles_ids(family, text):
    bpe(family)  # the batch merge and its table of character pairs are BPE's
    expected = oracle(family).encode(text, add_special_tokens=False).ids
    fast, general = tokenizers(family)
    assert fast.encode(text, add_special_tokens=False) == expected, text
    assert general.encode(text, add_special_tokens=False) == expected, text


@pytest.mark.parametrize("family", UNIGRAM_FAMILIES)
@EXAMPLES
@given(text=st.one_of(new_words(), unicode_text()))
def test_unigram_gets_the_oracles_ids_new_and_cached(family, text):
    # The first encoding runs the lattice over the trie; the second takes the cached pieces.
    expected = oracle(family).encode(text, add_special_tokens=False).ids
    tokenizer = tokenizers(family)[0]
    assert tokenizer.encode(text, add_special_tokens=False) == expected, text
    assert tokenizer.encode(text, add_special_tokens=False) == expected, text


@EXAMPLES
@given(text=st.one_of(new_words(), unicode_text()))
def test_wordpiece_gets_the_oracles_ids_new_and_cached(text):
    expected = oracle("wordpiece").encode(text, add_special_tokens=False).ids
    tokenizer = tokenizers("wordpiece")[0]
    assert tokenizer.encode(text, add_special_tokens=False) == expected, text
    assert tokenizer.encode(text, add_special_tokens=False) == expected, text


def test_wordpiece_answers_from_its_cache():
    # Otherwise the test above would compare the longest matches with themselves.
    model = Tokenizer.from_dir(family_path("wordpiece")).model
    model.tokenize("hello")
    model._cache["hello"] = [0]
    assert model.tokenize("hello") == [0]


@EXAMPLES
@given(text=st.one_of(new_words(), unicode_text()))
def test_wordlevel_tokenize_all_is_tokenize_of_each(text):
    model = tokenizers("wordlevel")[0].model
    pieces = [piece for piece in model_pieces(tokenizers("wordlevel")[0], text) if piece] + ["not a word"]
    assert model.tokenize_all(pieces) == [token_id for piece in pieces for token_id in model.tokenize(piece)]


def test_unigram_answers_from_its_cache():
    # Otherwise the test above would compare the lattice with itself.
    model = Tokenizer.from_dir(family_path("unigram")).model
    model.tokenize("▁hello")
    model._cache["▁hello"] = (0,)
    assert model.tokenize("▁hello") == [0]


def test_precompiled_cluster_table_stays_within_its_capacity(monkeypatch):
    from textbound.impl.tokenizer import precompiled

    fresh, normalizer = Tokenizer.from_dir(family_path("unigram")).normalizer, tokenizers("unigram")[0].normalizer
    found = [stage for stage in getattr(normalizer, "normalizers", [normalizer]) if type(stage) is precompiled.Precompiled]
    assert found, "the unigram family has a Precompiled normalizer"
    text = "ｈｉ\u3000① Ａ\u0301 " + string.ascii_letters
    expected = found[0].normalize(text)
    monkeypatch.setattr(precompiled, "CLUSTER_TABLE_CAPACITY", 8)
    stage = next(stage for stage in getattr(fresh, "normalizers", [fresh]) if type(stage) is precompiled.Precompiled)
    assert stage.normalize(text) == expected
    assert len(stage._normalized_clusters) <= 8


def test_a_wrong_character_pair_rule_is_caught():
    model = Tokenizer.from_dir(family_path("gpt2")).model
    model.tokenize_batch(["Ġhello", "Ġworld"])
    pair = next(pair for pair, rule in model._pair_rules.items() if rule != NO_RULE)
    model._pair_rules[pair] = NO_RULE  # as a table filled with the wrong rule would hold
    piece = "".join(pair)
    assert model.tokenize_batch([piece]) != [model.tokenize(piece)]


def test_the_character_pair_table_stays_within_its_capacity(monkeypatch):
    monkeypatch.setattr(models, "PAIR_TABLE_CAPACITY", 3)
    model = Tokenizer.from_dir(family_path("gpt2")).model
    pieces = ["Ġhello", "Ġworld", "Ġagain"]
    for piece in pieces:  # each new piece finds a full table and starts a new one
        assert model.tokenize_batch([piece]) == [tokenizers("gpt2")[1].model.tokenize(piece)]
        assert set(model._pair_rules) == set(zip(piece, piece[1:]))


def sentencepiece_bpe(merges: list[str]) -> BPE:
    tokens = ["<unk>", "▁", "a", "b", *("".join(merge.split(" ")) for merge in merges)]
    node = {"type": "BPE", "vocab": {token: i for i, token in enumerate(dict.fromkeys(tokens))}, "merges": merges,
            "unk_token": "<unk>"}
    return BPE.from_json(node, "m")


def test_pieces_are_cut_before_a_separator_no_merge_crosses():
    model = sentencepiece_bpe(["▁ a", "a b", "▁ ▁", "▁▁ a"])
    assert model.chunks("▁ab▁▁a▁") == ["▁ab", "▁▁a", "▁"]
    assert model.tokenize("▁ab▁▁a" * 20) == model._merge_by_queue(model._symbols("▁ab▁▁a" * 20))


def test_pieces_are_not_cut_where_a_merge_crosses():
    model = sentencepiece_bpe(["▁ a", "a b", "b ▁"])  # "b▁": a token ending in b takes the "▁" after it
    assert model.chunks("▁ab▁a") == ["▁ab▁a"]
    assert model.tokenize("▁ab▁a" * 20) == model._merge_by_queue(model._symbols("▁ab▁a" * 20))


def test_pieces_of_known_characters_are_cut_where_no_made_token_spans():
    # "b▁" is made, so a "▁" after a "b" stays joined; after an "a" no made token spans the cut.
    model = sentencepiece_bpe(["▁ a", "a b", "b ▁"])
    assert model.chunks("▁ab▁a▁a") == ["▁ab▁a", "▁a"]
    text = "▁ab▁a▁a▁b▁▁ab" * 20
    assert model.tokenize(text) == model._merge_by_queue(model._symbols(text))
    assert model.chunks("▁ab▁a▁x▁a") == ["▁ab▁a▁x▁a"]  # "x" is no token: no cut


def test_a_cut_across_a_made_token_is_caught(monkeypatch):
    model = sentencepiece_bpe(["▁ a", "a b", "b ▁"])
    monkeypatch.setattr(BPE, "_make_cut_pattern", lambda self: regex.compile("(?<=.)(?=▁)"))
    text = "▁ab▁b" * 20  # whole: "▁a", "b▁", "b", ...; cut before each "▁": "▁a", "b", "▁", "b", ...
    assert model.tokenize(text) != model._merge_by_queue(model._symbols(text))


@pytest.mark.parametrize("family", BPE_FAMILIES)
def test_merges_load_in_bulk_as_entry_by_entry(family):
    bpe(family)
    node = json.loads((family_path(family) / "tokenizer.json").read_text("utf-8"))["model"]
    vocab, prefix, merges = node["vocab"], node.get("continuing_subword_prefix"), node["merges"]
    # Both spellings of the same merges: pairs, and (where no token holds a space) "left right" strings.
    spellings = [merges] + ([[" ".join(pair) for pair in merges]] if not any(" " in t for p in merges for t in p) else [])
    for spelled in spellings:
        ids = _merge_ids(spelled, vocab, prefix)
        assert ids is not None or prefix, "the usual file is read in bulk"
        if ids is not None:
            assert _packed_rules(*ids) == _merge_rules(_merge_pairs_from_json(spelled, WHERE), vocab, prefix, WHERE)


@pytest.mark.parametrize("merges", [["a b", "a c"], [["a", "b"], ["b", "a"]], ["a b", ["a", "b"]], ["a  b"]])
def test_faulty_merges_are_left_to_the_entry_by_entry_reading(merges):
    vocab = {"a": 0, "b": 1, "ab": 2}
    assert _merge_ids(merges, vocab, None) is None
    with pytest.raises(TokenizerFileError):
        _merge_rules(_merge_pairs_from_json(merges, WHERE), vocab, None, WHERE)


def test_a_version_line_is_left_to_the_entry_by_entry_reading():
    merges, vocab = ["#version: 0.2", "a b"], {"a": 0, "b": 1, "ab": 2}
    assert _merge_ids(merges, vocab, None) is None
    assert _merge_rules(_merge_pairs_from_json(merges, WHERE), vocab, None, WHERE) == {0 << 32 | 1: 1 << 32 | 2}


# -- patterns, pre-tokenizers, normalizers ---------------------------------------------------------

PATTERNS = [GPT2_SPLIT, compile_oniguruma(r"x*"), compile_oniguruma(r"\b"), compile_oniguruma(r"a|"),
            compile_oniguruma(r"(?=a)|b+"), compile_oniguruma(r"\s+(?!\S)|\s+|\p{L}+"), regex.compile("", FLAGS),
            compile_oniguruma(r"(?i:'s|'t)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+")]


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.pattern[:30] for p in PATTERNS])
@EXAMPLES
@given(text=st.one_of(unicode_text(), st.text("ab x\n", max_size=12)))
def test_match_spans_as_a_search_per_match_finds_them(pattern, text):
    assert list(match_spans(pattern, text)) == (list(_spans_searched(pattern, text, None)) if text else [])


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.pattern[:30] for p in PATTERNS])
@EXAMPLES
@given(text=st.one_of(unicode_text(), st.text("ab x\n", max_size=12)))
def test_isolated_pieces_are_cuts_texts(pattern, text):
    expected = [part.text for part in cut(Piece(text, True), pattern, _isolated) if part.text]
    assert isolated_pieces(pattern, text) == expected


def cut_by_segments(piece: Piece, pattern: regex.Pattern[str], behavior, invert: bool = False) -> list[Piece]:
    """cut's general way: every segment found, then the behavior (no shortcut for a piece without a match)."""
    segments = [(start, end, is_match is not invert) for start, end, is_match in find_matches(pattern, piece.text)]
    return [Piece(piece.text[start:end], piece.at_start and start == 0) for start, end in behavior(segments)]


# The pre-tokenizers' own patterns, none of whose matches is empty (what cut_removed asks).
CLASS_PATTERNS = [WHITESPACE_PATTERN, WORDS_OR_SYMBOLS, PUNCTUATION, NUMERIC, regex.compile(regex.escape("-"), FLAGS)]
CUT_TEXTS = st.one_of(unicode_text(), st.text("ab 1-,.\n\u3000", max_size=16))


@pytest.mark.parametrize("pattern", PATTERNS + CLASS_PATTERNS, ids=[p.pattern[:30] for p in PATTERNS + CLASS_PATTERNS])
@pytest.mark.parametrize("behavior", list(BEHAVIORS.values()), ids=list(BEHAVIORS))
@EXAMPLES
@given(text=CUT_TEXTS, at_start=st.booleans(), invert=st.booleans())
def test_cut_gives_the_pieces_of_its_segments(pattern, behavior, text, at_start, invert):
    piece = Piece(text, at_start)
    assert cut(piece, pattern, behavior, invert) == cut_by_segments(piece, pattern, behavior, invert)


@pytest.mark.parametrize("pattern", CLASS_PATTERNS, ids=[p.pattern[:30] for p in CLASS_PATTERNS])
@EXAMPLES
@given(text=CUT_TEXTS, at_start=st.booleans(), invert=st.booleans())
def test_cut_removed_is_cut_by_segments(pattern, text, at_start, invert):
    piece = Piece(text, at_start)
    expected = [part for part in cut_by_segments(piece, pattern, _removed, invert) if part.text]
    assert cut_removed(piece, pattern, invert) == expected


@EXAMPLES
@given(text=CUT_TEXTS, at_start=st.booleans())
def test_cut_isolated_is_cut_by_segments(text, at_start):
    piece = Piece(text, at_start)
    expected = [part for part in cut_by_segments(piece, PUNCTUATION, _isolated) if part.text]
    assert cut_isolated(piece, PUNCTUATION_ALONE) == expected


STAGES = [Punctuation(_isolated), Punctuation(_contiguous), Digits(True), Digits(False), WhitespaceSplit(),
          CharDelimiterSplit("-"), Split(compile_oniguruma(r"\p{P}"), _merged_with_next, False),
          Split(compile_oniguruma(r"x*"), _isolated, False), Split(compile_oniguruma(r"\s+"), _removed, True)]


@pytest.mark.parametrize("stage", STAGES, ids=[f"{type(stage).__name__}-{at}" for at, stage in enumerate(STAGES)])
@EXAMPLES
@given(texts=st.lists(CUT_TEXTS, max_size=6), at_start=st.booleans())
def test_a_stage_splits_only_the_pieces_its_pattern_matches_as_it_splits_each(stage, texts, at_start):
    pieces = [Piece(text, at_start and at == 0) for at, text in enumerate(texts)]
    assert stage.pre_tokenize(pieces) == [part for piece in pieces for part in stage.split(piece) if part.text]


def test_a_stage_whose_split_is_replaced_splits_every_piece():
    class Shouting(Punctuation):
        def split(self, piece):
            return [Piece(part.text.upper(), part.at_start) for part in super().split(piece)]

    assert Shouting(_isolated).pre_tokenize([Piece("ab", True), Piece("c,d", False)]) == \
        [Piece("AB", True), Piece("C", False), Piece(",", False), Piece("D", False)]


def test_cut_removed_keeps_the_start_only_on_a_piece_starting_the_text():
    # Both ways a wrong at_start could go (Metaspace's prepend_scheme "first" reads it).
    assert cut_removed(Piece(" a b", True), WHITESPACE_PATTERN) == [Piece("a", False), Piece("b", False)]
    assert cut_removed(Piece("a b", True), WHITESPACE_PATTERN) == [Piece("a", True), Piece("b", False)]
    assert cut_removed(Piece(" a", True), WORDS_OR_SYMBOLS, invert=True) == [Piece("a", False)]
    assert cut_removed(Piece("a ", True), WORDS_OR_SYMBOLS, invert=True) == [Piece("a", True)]


@EXAMPLES
@given(replacement=st.sampled_from("▁]^-\\a"), text=st.text("ab ▁]^-\\", max_size=16), at_start=st.booleans())
def test_metaspace_pieces_are_cuts_merged_with_next(replacement, text, at_start):
    metaspace, spaced = Metaspace(replacement, "never", split=True), text.replace(" ", replacement)
    expected = cut(Piece(spaced, at_start), regex.compile(regex.escape(replacement), FLAGS), _merged_with_next)
    assert metaspace.split(Piece(text, at_start)) == expected


@EXAMPLES
@given(data=st.binary(max_size=40))
def test_bytes_to_chars_spells_each_byte(data):
    assert bytes_to_chars(data) == "".join(BYTE_TO_CHAR[byte] for byte in data)


@EXAMPLES
@given(literal=st.text("ab ▁", min_size=1, max_size=3), content=st.text("ab▁\\", max_size=3),
       text=st.text("ab ▁c", max_size=20))
def test_replace_by_a_literal_as_by_its_pattern(literal, content, text):
    pattern = regex.compile(regex.escape(literal), FLAGS)
    assert Replace(pattern, content, literal).normalize(text) == Replace(pattern, content).normalize(text)
