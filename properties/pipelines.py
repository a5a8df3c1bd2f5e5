"""Pipeline fuzzing: random tokenizer.json pipelines, trained with `tokenizers`, as new families.

A pipeline is drawn as a *skeleton*: a complete tokenizer.json whose BPE model has an empty
vocabulary, plus a training plan. ``train_skeleton`` trains the model with BpeTrainer and writes
the tokenizer.json both sides then load. Every part of a skeleton is optional or has a simplest
choice listed first, so Hypothesis shrinks a failing pipeline towards the fewest components.

Pipelines are coherent often enough to be realistic (a ByteLevel pre-tokenizer usually comes with
a ByteLevel decoder, byte fallback with the llama-style decoder) and random otherwise.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import tokenizers
from hypothesis import strategies as st
from tokenizers.pre_tokenizers import ByteLevel
from tokenizers.trainers import BpeTrainer

from corpora import text_files

from .strategies import draw_examples, unicode_text

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

# BpeTrainer sets these on the model itself; the rest of the model's options it leaves alone.
TRAINER_MODEL_OPTIONS = ("continuing_subword_prefix", "end_of_word_suffix")


@dataclass(frozen=True)
class TrainingPlan:
    vocab_size: int
    corpus_files: tuple[str, ...]    # names of corpora/text files whose lines are trained on
    extra_texts: tuple[str, ...]     # generated lines, so odd characters reach the alphabet
    byte_alphabet: bool              # start from the 256 ByteLevel characters
    leading_added: int               # how many of the added tokens the trainer puts first in the vocabulary

    def lines(self) -> list[str]:
        texts = text_files()
        return [line for name in self.corpus_files for line in texts[name].splitlines()] + list(self.extra_texts)


@dataclass(frozen=True)
class FuzzPipeline:
    skeleton: dict = field(hash=False)
    plan: TrainingPlan


# -- the pipeline's parts ------------------------------------------------------------------------

def normalizers() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": kind} for kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents")]),
        st.builds(lambda left, right: {"type": "Strip", "strip_left": left, "strip_right": right},
                  st.booleans(), st.booleans()),
        st.builds(lambda pattern, content: {"type": "Replace", "pattern": pattern, "content": content},
                  st.sampled_from(REPLACE_PATTERNS), st.sampled_from(REPLACEMENTS)),
        st.builds(lambda prepend: {"type": "Prepend", "prepend": prepend}, st.sampled_from(["▁", " ", "_", "xy"])),
    )
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=4).map(
        lambda parts: {"type": "Sequence", "normalizers": parts}), max_leaves=6)


def byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
            "use_regex": use_regex}


def metaspace(replacement: str, prepend_scheme: str, split: bool) -> dict:
    return {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}


def pre_tokenizers() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": "Whitespace"}, {"type": "WhitespaceSplit"}]),
        st.builds(byte_level, st.booleans(), st.booleans(), st.booleans()),
        st.builds(metaspace, st.sampled_from(METASPACE_REPLACEMENTS), st.sampled_from(PREPEND_SCHEMES), st.booleans()),
        st.builds(lambda pattern, behavior, invert: {"type": "Split", "pattern": pattern, "behavior": behavior,
                                                     "invert": invert},
                  st.sampled_from(SPLIT_PATTERNS), st.sampled_from(SPLIT_BEHAVIORS), st.booleans()),
        st.builds(lambda behavior: {"type": "Punctuation", "behavior": behavior}, st.sampled_from(SPLIT_BEHAVIORS)),
        st.builds(lambda individual: {"type": "Digits", "individual_digits": individual}, st.booleans()),
    )
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3).map(
        lambda parts: {"type": "Sequence", "pretokenizers": parts}), max_leaves=4)


def model_options() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({
        "byte_fallback": st.booleans(),
        "ignore_merges": st.booleans(),
        "unk_token": st.sampled_from([None, UNK]),
        "fuse_unk": st.booleans(),
        "continuing_subword_prefix": st.sampled_from([None, "##", "@@"]),
        "end_of_word_suffix": st.sampled_from([None, "</w>", "_"]),
    })


def added_tokens() -> st.SearchStrategy[list[dict]]:
    token = st.builds(
        lambda content, special, normalized, lstrip, rstrip, single_word: {
            "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": normalized, "special": special},
        st.sampled_from(ADDED_TOKEN_CONTENTS), st.booleans(), st.booleans(), st.booleans(), st.booleans(),
        st.booleans())
    return st.lists(token, max_size=6, unique_by=lambda t: t["content"])


def decoders() -> st.SearchStrategy[dict]:
    leaf = st.one_of(
        st.sampled_from([{"type": "ByteFallback"}, {"type": "Fuse"}, byte_level(True, True, True)]),
        st.builds(metaspace, st.sampled_from(METASPACE_REPLACEMENTS), st.sampled_from(PREPEND_SCHEMES), st.booleans()),
        st.builds(lambda pattern, content: {"type": "Replace", "pattern": pattern, "content": content},
                  st.sampled_from(REPLACE_PATTERNS), st.sampled_from(REPLACEMENTS)),
        st.builds(lambda content, start, stop: {"type": "Strip", "content": content, "start": start, "stop": stop},
                  st.sampled_from([" ", "▁", "a"]), st.integers(0, 2), st.integers(0, 2)),
        st.builds(lambda suffix: {"type": "BPEDecoder", "suffix": suffix}, st.sampled_from(["</w>", "_", ""])),
    )
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=4).map(
        lambda parts: {"type": "Sequence", "decoders": parts}), max_leaves=5)


def matching_decoder(pre_tokenizer: dict | None, model: dict) -> dict | None:
    """The decoder a real tokenizer would pair with this pre-tokenizer and model."""
    found = {node["type"]: node for node in _flatten(pre_tokenizer, "pretokenizers")}
    if "ByteLevel" in found:
        return byte_level(True, True, True)
    if "Metaspace" in found:
        space = found["Metaspace"]
        if model["byte_fallback"]:  # llama 2
            return {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": space["replacement"]}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
        return dict(space)
    if model["end_of_word_suffix"]:
        return {"type": "BPEDecoder", "suffix": model["end_of_word_suffix"]}
    return None


def _flatten(node: dict | None, children: str) -> list[dict]:
    if node is None:
        return []
    if node["type"] == "Sequence":
        return [leaf for child in node[children] for leaf in _flatten(child, children)]
    return [node]


@st.composite
def post_processors(draw, special_tokens: list[str]) -> dict | None:
    """A post-processor adding some of ``special_tokens``; ids are filled in by train_skeleton."""
    if not special_tokens:
        return draw(st.sampled_from([None, byte_level(True, True, True)]))
    token = st.sampled_from(special_tokens)
    template = st.builds(
        lambda before, after: {
            "type": "TemplateProcessing",
            "single": [_special_piece(t) for t in before] + [_sequence_piece("A", 0)] + [_special_piece(t) for t in after],
            "pair": [_sequence_piece("A", 0), _sequence_piece("B", 1)],
            "special_tokens": {t: {"id": t, "ids": [0], "tokens": [t]} for t in {*before, *after}}},
        st.lists(token, max_size=2), st.lists(token, max_size=2))
    wrapping = st.builds(lambda kind, sep, cls: {"type": kind, "sep": [sep, 0], "cls": [cls, 0]},
                         st.sampled_from(["BertProcessing", "RobertaProcessing"]), token, token)
    single = st.one_of(template, wrapping, st.builds(byte_level, st.booleans(), st.booleans(), st.booleans()))
    sequence = st.lists(single, min_size=1, max_size=3).map(lambda parts: {"type": "Sequence", "processors": parts})
    return draw(st.one_of(st.none(), single, sequence))


def _special_piece(token: str) -> dict:
    return {"SpecialToken": {"id": token, "type_id": 0}}


def _sequence_piece(name: str, type_id: int) -> dict:
    return {"Sequence": {"id": name, "type_id": type_id}}


@st.composite
def fuzz_pipelines(draw) -> FuzzPipeline:
    model = {"type": "BPE", "dropout": None, **draw(model_options()), "vocab": {}, "merges": []}
    pre_tokenizer = draw(st.none() | pre_tokenizers())
    coherent = not draw(st.booleans())
    decoder = matching_decoder(pre_tokenizer, model) if coherent else draw(st.none() | decoders())
    added = draw(added_tokens())
    if model["unk_token"]:
        added = [{"content": UNK, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                  "special": True}] + added
    added = [{"id": index, **token} for index, token in enumerate(added)]
    specials = [t["content"] for t in added if t["special"]]
    skeleton = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": draw(st.none() | normalizers()), "pre_tokenizer": pre_tokenizer,
        "post_processor": draw(post_processors(specials)), "decoder": decoder, "model": model,
    }
    plan = TrainingPlan(
        vocab_size=draw(st.integers(60, 600)),
        corpus_files=tuple(draw(st.lists(st.sampled_from(sorted(text_files())), min_size=1, max_size=4, unique=True))),
        extra_texts=tuple(draw(st.lists(unicode_text(), max_size=8))),
        # A GPT-2 style tokenizer starts from every byte; elsewhere a partial alphabet tests unknown text.
        byte_alphabet=(coherent and decoder == byte_level(True, True, True)) or draw(st.booleans()),
        # The unknown token must be in the vocabulary, so the trainer always places it.
        leading_added=draw(st.integers(1 if model["unk_token"] else 0, len(added))),
    )
    return FuzzPipeline(skeleton, plan)


# -- training ------------------------------------------------------------------------------------

def train_skeleton(skeleton: dict, plan: TrainingPlan, out_dir: Path) -> Path:
    """Trains the skeleton's BPE model and writes ``out_dir/tokenizer.json``; returns ``out_dir``.

    The trainer places the first ``plan.leading_added`` added tokens at the start of the
    vocabulary; the others get the ids after the vocabulary, as tokenizers numbers them, unless
    their text is already a token. With byte fallback the 256 "<0xNN>" tokens join the vocabulary
    (BpeTrainer does not add them). Post-processor ids are looked up by token text.
    """
    model = skeleton["model"]
    added = skeleton["added_tokens"]
    tokenizer = tokenizers.Tokenizer.from_str(json.dumps({**skeleton, "added_tokens": [], "post_processor": None}))
    trainer = BpeTrainer(
        vocab_size=plan.vocab_size, show_progress=False,
        special_tokens=[token["content"] for token in added[:plan.leading_added]],
        initial_alphabet=ByteLevel.alphabet() if plan.byte_alphabet else [],
        **{option: model[option] for option in TRAINER_MODEL_OPTIONS if model[option] is not None})
    tokenizer.train_from_iterator(plan.lines(), trainer)
    trained = json.loads(tokenizer.to_str())
    vocab = trained["model"]["vocab"]
    if model["byte_fallback"]:
        for value in range(256):
            vocab.setdefault(f"<0x{value:02X}>", len(vocab))
    ids: dict[str, int] = {}
    next_id = len(vocab)
    for content in (token["content"] for token in added):
        if content in vocab:
            ids[content] = vocab[content]
        else:
            ids[content], next_id = next_id, next_id + 1
    trained["added_tokens"] = [{**token, "id": ids[token["content"]]} for token in added]
    trained["post_processor"] = _with_ids(skeleton["post_processor"], ids)
    final = tokenizers.Tokenizer.from_str(json.dumps(trained))
    out_dir.mkdir(parents=True, exist_ok=True)
    final.save(str(out_dir / "tokenizer.json"))
    return out_dir


def _with_ids(processor: dict | None, ids: dict[str, int]) -> dict | None:
    """The post-processor with every special token's id set from its text."""
    if processor is None:
        return None
    kind = processor["type"]
    if kind == "Sequence":
        return {**processor, "processors": [_with_ids(p, ids) for p in processor["processors"]]}
    if kind == "TemplateProcessing":
        return {**processor, "special_tokens": {
            name: {**spec, "ids": [ids[t] for t in spec["tokens"]]} for name, spec in processor["special_tokens"].items()}}
    if kind in ("BertProcessing", "RobertaProcessing"):
        return {**processor, "sep": [processor["sep"][0], ids[processor["sep"][0]]],
                "cls": [processor["cls"][0], ids[processor["cls"][0]]]}
    return processor


def fuzz_families(seed: int, count: int, out_dir: Path) -> list[tuple[str, Path, dict]]:
    """``count`` fuzzed families, the same ones for the same seed: (name, folder, skeleton)."""
    families = []
    for index, pipeline in enumerate(draw_examples(fuzz_pipelines(), count, seed)):
        name = f"fuzz-{seed}-{index}"
        families.append((name, train_skeleton(pipeline.skeleton, pipeline.plan, Path(out_dir) / name),
                         pipeline.skeleton))
    return families
