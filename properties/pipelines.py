"""Pipeline fuzzing: random tokenizer.json pipelines, drawn as family specs.

A pipeline is drawn as a family spec in the format of corpora/tokenizer_specs (see
textbound.families.embedded): every stage written as in a tokenizer.json, the model's type and
options, added tokens, and trainer parameters, for any model type. textbound.families.fuzzed
trains it on the corpora as the embedded families are trained, the same deterministic way. Every
part of a spec is optional or has its simplest choice first, so Hypothesis shrinks a failing
pipeline towards the fewest components.

Pipelines are coherent often enough to be realistic (a ByteLevel pre-tokenizer usually comes with
a ByteLevel decoder, byte fallback with the llama-style decoder) and random otherwise.
"""
from __future__ import annotations

import json

import tokenizers
from hypothesis import strategies as st

from textbound.corpora import text_files
from textbound.corpora.charsmaps import resolve_charsmaps

GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPLIT_PATTERNS = (
    {"String": " "}, {"String": "\n"}, {"String": "a"}, {"String": "<"}, {"String": "--"}, {"String": "▁"},
    {"Regex": GPT2_PATTERN}, {"Regex": LLAMA3_PATTERN}, {"Regex": r"\s+"}, {"Regex": r"\d"},
    {"Regex": r"\p{L}+"}, {"Regex": r"[^\s\p{L}\p{N}]+"}, {"Regex": r" ?\p{L}+"}, {"Regex": r"\w+|[^\w\s]+"},
    {"Regex": r"(?i:the)"}, {"Regex": r"[\r\n]+"},
)
REPLACE_PATTERNS = (
    {"String": " "}, {"String": "a"}, {"String": "▁"}, {"String": "\n"}, {"String": "  "}, {"String": "é"},
    {"Regex": r"\s+"}, {"Regex": r" {2,}"}, {"Regex": r"\d"}, {"Regex": r"[aeiou]"}, {"Regex": r"\p{P}"},
    {"Regex": r"(?i)the"}, {"Regex": r"^ "}, {"Regex": r"\p{M}"},
)
REPLACEMENTS = ("", " ", "▁", "_", "ab", "\n")
SPLIT_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
PREPEND_SCHEMES = ("always", "first", "never")
METASPACE_REPLACEMENTS = ("▁", "_", "-")
ADDED_TOKEN_CONTENTS = (
    "<s>", "</s>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "[CLS]", "[SEP]", "<think>", "</think>",
    "<pad>", "<mask>", " ", "\n\n", "ab", "the", "▁the", "Hello World", "😀", "é", "É", "<0x41>", "  ",
)
UNK = "<unk>"
SENTENCEPIECE_RULES = ("nmt_nfkc", "nfkc_cf")
ADDED_TOKEN_DEFAULTS = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False}


# -- the pipeline's parts ------------------------------------------------------------------------

def node(kind: str, **fields: st.SearchStrategy) -> st.SearchStrategy[dict]:
    """A JSON node of type ``kind``; a dict strategy, so failing examples print as JSON."""
    return st.fixed_dictionaries({"type": st.just(kind), **fields})


def sequences(leaf: st.SearchStrategy[dict], children: str, max_leaves: int) -> st.SearchStrategy[dict]:
    """``leaf`` nodes, alone or in (nested, possibly empty) Sequence nodes listing them under ``children``."""
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3).map(
        lambda parts: {"type": "Sequence", children: parts}), max_leaves=max_leaves)


def replace() -> st.SearchStrategy[dict]:
    return node("Replace", pattern=st.sampled_from(REPLACE_PATTERNS), content=st.sampled_from(REPLACEMENTS))


def normalizers() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": kind} for kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents")]),
        node("Strip", strip_left=st.booleans(), strip_right=st.booleans()),
        replace(),
        node("Prepend", prepend=st.sampled_from(["▁", " ", "_", "xy"])),
        st.just({"type": "Nmt"}),
        node("BertNormalizer", clean_text=st.booleans(), handle_chinese_chars=st.booleans(),
             strip_accents=st.sampled_from([None, True, False]), lowercase=st.booleans()),
        # Compiled from SentencePiece's rules when the family is trained (corpora.charsmaps).
        node("Precompiled", precompiled_charsmap=st.sampled_from(SENTENCEPIECE_RULES).map(
            lambda rule: {"sentencepiece_rule": rule})),
    )
    return sequences(leaf, "normalizers", max_leaves=6)


def byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
            "use_regex": use_regex}


def byte_levels() -> st.SearchStrategy[dict]:
    return st.builds(byte_level, st.booleans(), st.booleans(), st.booleans())


def metaspace_node(prepend_scheme: str, replacement: str = "▁", split: bool = True) -> dict:
    return {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}


def metaspaces() -> st.SearchStrategy[dict]:
    return st.builds(metaspace_node, st.sampled_from(PREPEND_SCHEMES), st.sampled_from(METASPACE_REPLACEMENTS),
                     st.booleans())


def pre_tokenizers() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": "Whitespace"}, {"type": "WhitespaceSplit"}]),
        byte_levels(),
        metaspaces(),
        node("Split", pattern=st.sampled_from(SPLIT_PATTERNS), behavior=st.sampled_from(SPLIT_BEHAVIORS),
             invert=st.booleans()),
        node("Punctuation", behavior=st.sampled_from(SPLIT_BEHAVIORS)),
        node("Digits", individual_digits=st.booleans()),
        st.sampled_from([{"type": "BertPreTokenizer"}, {"type": "UnicodeScripts"}]),
        node("CharDelimiterSplit", delimiter=st.sampled_from([" ", "a", "▁", "\n"])),
    )
    return sequences(leaf, "pretokenizers", max_leaves=4)


def bpe_models() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({
        "type": st.just("BPE"),
        "dropout": st.none(),
        "byte_fallback": st.booleans(),
        "ignore_merges": st.booleans(),
        "unk_token": st.sampled_from([None, UNK]),
        "fuse_unk": st.booleans(),
        "continuing_subword_prefix": st.sampled_from([None, "##", "@@"]),
        "end_of_word_suffix": st.sampled_from([None, "</w>", "_"]),
    })


def models() -> st.SearchStrategy[dict]:
    """A model spec (no vocabulary); BPE first, as most tokenizers are. The others always have an
    unknown token: without one, an unknown character fails the oracle's encode."""
    return st.one_of(
        bpe_models(),
        node("Unigram", byte_fallback=st.booleans()),
        node("WordPiece", unk_token=st.just(UNK), continuing_subword_prefix=st.sampled_from(["##", "@@"]),
             max_input_chars_per_word=st.sampled_from([100, 8, 3])),
        node("WordLevel", unk_token=st.just(UNK)),
    )


def added_token(content: str, **flags: bool) -> dict:
    """An added-token node; flags not given are false, except ``normalized``."""
    return {"content": content, **dict(ADDED_TOKEN_DEFAULTS, **flags)}


def added_tokens() -> st.SearchStrategy[list[dict]]:
    token = st.fixed_dictionaries({"content": st.sampled_from(ADDED_TOKEN_CONTENTS), **{
        flag: st.booleans() for flag in ADDED_TOKEN_DEFAULTS}})
    return st.lists(token, max_size=6, unique_by=lambda t: t["content"])


def decoders() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": "ByteFallback"}, {"type": "Fuse"}, byte_level(True, True, True)]),
        metaspaces(),
        replace(),
        # stop > 0 makes tokenizers panic on tokens shorter than stop, which no check can judge.
        node("Strip", content=st.sampled_from([" ", "▁", "a"]), start=st.integers(0, 2), stop=st.just(0)),
        node("BPEDecoder", suffix=st.sampled_from(["</w>", "_", ""])),
        node("WordPiece", prefix=st.sampled_from(["##", "@@"]), cleanup=st.booleans()),
        node("CTC", pad_token=st.sampled_from(["<pad>", UNK]), word_delimiter_token=st.sampled_from(["|", "▁"]),
             cleanup=st.booleans()),
    )
    return sequences(leaf, "decoders", max_leaves=5)


def matching_decoder(pre_tokenizer: dict | None, model: dict) -> dict | None:
    """The decoder a real tokenizer would pair with this pre-tokenizer and model."""
    found = {part["type"]: part for part in _flatten(pre_tokenizer, "pretokenizers")}
    if "ByteLevel" in found:
        return byte_level(True, True, True)
    if model["type"] == "WordPiece":
        return {"type": "WordPiece", "prefix": model["continuing_subword_prefix"], "cleanup": True}
    if "Metaspace" in found:
        space = found["Metaspace"]
        if model.get("byte_fallback"):  # llama 2
            return {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": space["replacement"]}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
        return dict(space)
    if model.get("end_of_word_suffix"):
        return {"type": "BPEDecoder", "suffix": model["end_of_word_suffix"]}
    return None


def _flatten(node: dict | None, children: str) -> list[dict]:
    if node is None:
        return []
    if node["type"] == "Sequence":
        return [leaf for child in node[children] for leaf in _flatten(child, children)]
    return [node]


def post_processors(special_tokens: list[str]) -> st.SearchStrategy[dict | None]:
    """A post-processor adding some of ``special_tokens``, ids left out for training to fill in."""
    if not special_tokens:
        return st.sampled_from([None, byte_level(True, True, True)])
    token = st.sampled_from(special_tokens)
    template = st.builds(template_processing, st.lists(token, max_size=2), st.lists(token, max_size=2))
    named = st.tuples(token, st.none()).map(list)  # [token, id], the id filled in by training
    bert = node("BertProcessing", sep=named, cls=named)
    roberta = node("RobertaProcessing", sep=named, cls=named, trim_offsets=st.booleans(),
                   add_prefix_space=st.booleans())
    adding = st.one_of(template, bert, roberta)
    # One processor that adds tokens, with ByteLevel ones around it, as in real tokenizers: chained
    # TemplateProcessings make tokenizers panic ("not yet implemented").
    sequence = st.tuples(st.lists(byte_levels(), max_size=1), adding, st.lists(byte_levels(), max_size=1)).map(
        lambda parts: {"type": "Sequence", "processors": [*parts[0], parts[1], *parts[2]]})
    return st.one_of(st.none(), adding, byte_levels(), sequence)


def template_processing(before: list[str], after: list[str]) -> dict:
    """Special tokens ``before`` and ``after`` the text; their ids left out for training to fill in."""
    return {
        "type": "TemplateProcessing",
        "single": [*map(_special_piece, before), _sequence_piece("A", 0), *map(_special_piece, after)],
        "pair": [_sequence_piece("A", 0), _sequence_piece("B", 1)],
        "special_tokens": {token: {"id": token, "tokens": [token]} for token in sorted({*before, *after})},
    }


def _special_piece(token: str) -> dict:
    return {"SpecialToken": {"id": token, "type_id": 0}}


def _sequence_piece(name: str, type_id: int) -> dict:
    return {"Sequence": {"id": name, "type_id": type_id}}


@st.composite
def fuzz_specs(draw) -> dict:
    """A family spec (the format of corpora/tokenizer_specs) for a random pipeline."""
    model = draw(models())
    pre_tokenizer = draw(st.none() | pre_tokenizers())
    coherent = not draw(st.booleans())
    decoder = matching_decoder(pre_tokenizer, model) if coherent else draw(st.none() | decoders())
    normalizer = draw(st.none() | normalizers())
    added = [_without_oracle_panics(token, normalizer) for token in draw(added_tokens())]
    has_unk = model["type"] != "BPE" or model["unk_token"]
    if has_unk:
        added = [added_token(UNK, special=True, normalized=False), *added]
    # The trainer reserves the first added tokens at the start of the vocabulary (the unknown token
    # must be there); the others get ids after it, unless training made them tokens already.
    reserved = draw(st.integers(1 if has_unk else 0, len(added)))
    corpus = sorted(text_files())
    trained_on = draw(st.lists(st.sampled_from(corpus), min_size=1, max_size=5, unique=True))
    trainer = {
        "vocab_size": draw(st.integers(60, 800)),
        "special_tokens": [token["content"] for token in added[:reserved]],
        "exclude_categories": [name for name in corpus if name not in trained_on],
    }
    if model["type"] == "Unigram":
        # UnigramTrainer needs room for every character it saw.
        trainer.update(vocab_size=draw(st.integers(2000, 3000)), unk_token=UNK)
    else:
        trainer["min_frequency"] = draw(st.integers(1, 3))
    # A GPT-2 style tokenizer starts from every byte; elsewhere a partial alphabet tests unknown text.
    if (coherent and decoder == byte_level(True, True, True)) or draw(st.booleans()):
        trainer["initial_alphabet"] = "byte_level"
    return {
        "description": "fuzzed pipeline", "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer, "model": model, "decoder": decoder,
        "post_processor": draw(post_processors([t["content"] for t in added if t["special"]])),
        "added_tokens": added, "trainer": trainer, "tokenizer_config": {},
    }


def _without_oracle_panics(token: dict, normalizer: dict | None) -> dict:
    """The token, changed where tokenizers would panic on ordinary text: a whitespace token that
    strips whitespace overlaps the matches of tokens around it ("AddedVocabulary bad split"), and a
    normalized token whose normalized text is empty matches inside characters ("not a char
    boundary"). No real tokenizer has either; both are reported divergences of their own."""
    if not token["content"].strip():
        token = {**token, "lstrip": False, "rstrip": False}
    if token["normalized"] and not _normalize(normalizer, token["content"]):
        token = {**token, "normalized": False}
    return token


def _normalize(normalizer: dict | None, text: str) -> str:
    if normalizer is None:
        return text
    tokenizer = tokenizers.Tokenizer.from_str(json.dumps({
        "version": "1.0", "normalizer": resolve_charsmaps(normalizer),
        "model": {"type": "WordLevel", "vocab": {}, "unk_token": "?"}}))
    return tokenizer.normalizer.normalize_str(text)


def plain_spec(**parts) -> dict:
    """A spec with no pipeline stages and a plain BPE model trained on Latin prose, with ``parts``
    (spec keys such as normalizer or added_tokens) put in: for small hand-made pipelines."""
    corpus = sorted(text_files())
    spec = {
        "description": "plain pipeline", "normalizer": None, "pre_tokenizer": None, "decoder": None,
        "post_processor": None, "added_tokens": [], "tokenizer_config": {},
        "model": {"type": "BPE", "dropout": None, "byte_fallback": False, "ignore_merges": False, "unk_token": None,
                  "fuse_unk": False, "continuing_subword_prefix": None, "end_of_word_suffix": None},
        "trainer": {"vocab_size": 300, "special_tokens": [],
                    "exclude_categories": [name for name in corpus if name != "prose_latin"]},
    }
    return {**spec, **parts}
