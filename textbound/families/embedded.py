"""Embedded tokenizer families: small tokenizers trained by `tokenizers` on the project's corpora.

Each family is a spec in ``corpora/tokenizer_specs/<name>.json``. Its pipeline stages (normalizer,
pre_tokenizer, decoder, post_processor) and added tokens are written exactly as they appear in a
tokenizer.json; ``model`` holds the model's type (BPE, Unigram, WordPiece or WordLevel) and
options, its vocabulary left out; ``trainer`` the parameters of that model's trainer plus:

- ``special_tokens``: strings reserved at the start of the vocabulary (ids 0, 1, ...);
- ``initial_alphabet``: ``"byte_level"`` for the 256 ByteLevel characters, or absent;
- ``exclude_categories``: corpus files left out of training, so their characters stay unknown;
- ``unmerged_tokens``: tokens appended to a trained BPE vocabulary with no merge that builds them,
  as extended or converted vocabularies hold (Llama 3's: what ``ignore_merges`` is for).

A model with ``byte_fallback`` gets the 256 ``<0xXX>`` tokens after the trained ones. A Precompiled
normalizer may name SentencePiece's built-in rules instead of spelling its charsmap:
``"precompiled_charsmap": {"sentencepiece_rule": "nmt_nfkc"}`` (built with the `sentencepiece`
package, which compiles the rules).

Post-processors name their special tokens and leave the ids out (``"sep": ["</s>", null]``, a
template's ``{"id": "<s>", "tokens": ["<s>"]}``); they are filled in from the trained vocabulary.

A build is cached (textbound.families.cache) under a directory named by a hash of the spec, the
corpus text, the tokenizers version and BUILD_FORMAT.

    >>> embedded_family("gpt2").path                   # doctest: +SKIP
    PosixPath('~/.cache/textbound/families/gpt2-...')
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from textbound import corpora
from textbound.corpora.charsmaps import resolve_charsmaps

from .cache import default_cache_dir, publish
from .family import Family, NamedFamilies, named_families

# Bump when the build procedure changes what it writes for an unchanged spec.
BUILD_FORMAT = 1

# The untrained model node of each type: the spec's options plus an empty vocabulary.
EMPTY_MODELS = {
    "BPE": {"vocab": {}, "merges": []},
    "WordPiece": {"vocab": {}},
    "WordLevel": {"vocab": {}},
    "Unigram": {"vocab": [], "unk_id": None},
}
SPEC_KEYS = frozenset({"description", "normalizer", "pre_tokenizer", "model", "decoder", "post_processor",
                       "added_tokens", "trainer", "tokenizer_config"})
TRAINER_EXTRAS = frozenset({"special_tokens", "initial_alphabet", "exclude_categories", "unmerged_tokens"})
FILES = ("tokenizer.json", "tokenizer_config.json")
BYTE_TOKENS = tuple(f"<0x{byte:02X}>" for byte in range(256))


def spec_dir() -> Path:
    return corpora.corpus_dir() / "tokenizer_specs"


def embedded_family_names() -> list[str]:
    return sorted(path.stem for path in spec_dir().glob("*.json"))


@cache
def _read_spec(name: str) -> str:
    if name not in embedded_family_names():
        raise ValueError(f"unknown family {name!r} (embedded: {', '.join(embedded_family_names())})")
    return (spec_dir() / f"{name}.json").read_text(encoding="utf-8")


def load_spec(name: str) -> dict[str, Any]:
    spec = json.loads(_read_spec(name))
    if set(spec) != SPEC_KEYS:
        raise ValueError(f"spec {name!r}: missing keys {sorted(SPEC_KEYS - set(spec))}, "
                         f"unknown keys {sorted(set(spec) - SPEC_KEYS)}")
    return spec


def embedded_family(name: str) -> Family:
    return Family(name, build_family(name), "embedded")


def spec_model_type(name: str) -> str:
    """``spec_model_type("gpt2") == "BPE"``: the model type of an embedded family's spec, untrained."""
    return load_spec(name)["model"]["type"]


named_families(NamedFamilies("embedded", embedded_family_names, embedded_family, in_default_run=True,
                             model_type=spec_model_type))


def build_family(name: str, cache_dir: Path | None = None) -> Path:
    """The directory holding the family's tokenizer.json and tokenizer_config.json, trained if needed."""
    import tokenizers

    spec = load_spec(name)
    key = hashlib.sha256(json.dumps(
        {"format": BUILD_FORMAT, "tokenizers": tokenizers.__version__, "spec": spec, "corpus": corpora.text_files()},
        sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:20]
    target = (cache_dir or default_cache_dir()) / "families" / f"{name}-{key}"
    if not _is_complete(target):
        publish(target, {"tokenizer.json": train(spec),
                          "tokenizer_config.json": json.dumps(spec["tokenizer_config"], indent=2, ensure_ascii=False)})
    return target


def train(spec: dict[str, Any]) -> str:
    """The tokenizer.json text of ``spec`` trained on the corpora; the same bytes on every run."""
    from tokenizers import AddedToken, Tokenizer, trainers
    from tokenizers.pre_tokenizers import ByteLevel

    spec = {**spec, "normalizer": resolve_charsmaps(spec["normalizer"])}
    model = spec["model"]
    trainer_spec = spec["trainer"]
    untrained = Tokenizer.from_str(_tokenizer_json(spec, model={**model, **EMPTY_MODELS[model["type"]]}))
    alphabet = ByteLevel.alphabet() if trainer_spec.get("initial_alphabet") == "byte_level" else []
    lines = list(_training_lines(trainer_spec.get("exclude_categories", [])))
    options = {k: v for k, v in trainer_spec.items() if k not in TRAINER_EXTRAS}
    special_tokens = [*trainer_spec.get("special_tokens", []), *_subword_variants(untrained, model, lines)]
    if model["type"] == "WordLevel":
        trainer = trainers.WordLevelTrainer(**options, show_progress=False, special_tokens=special_tokens)
    else:
        trainer_class = {"BPE": trainers.BpeTrainer, "WordPiece": trainers.WordPieceTrainer,
                         "Unigram": trainers.UnigramTrainer}[model["type"]]
        # The trainer, not the model, decides what the trained model's prefix and suffix are.
        affixes = {option: model[option] for option in ("continuing_subword_prefix", "end_of_word_suffix")
                   if model.get(option) is not None}
        trainer = trainer_class(**options, show_progress=False, initial_alphabet=alphabet,
                                special_tokens=special_tokens, **affixes)
    untrained.train_from_iterator(lines, trainer=trainer)
    trained_model = json.loads(untrained.to_str())["model"]
    if model["type"] == "Unigram":
        trained_model["vocab"] = _rescored_pieces(trained_model["vocab"], trainer_spec.get("special_tokens", []),
                                                  _pre_tokenized(untrained, lines))
        trained_model["unk_id"] = next((i for i, (piece, _) in enumerate(trained_model["vocab"])
                                        if piece == trainer_spec.get("unk_token")), None)
    _append_missing(trained_model, tuple(trainer_spec.get("unmerged_tokens", ())))
    if model.get("byte_fallback"):
        _append_missing(trained_model, BYTE_TOKENS)
        trained_model["byte_fallback"] = True

    tokenizer = Tokenizer.from_str(_tokenizer_json(spec, model=trained_model))
    for token in spec["added_tokens"]:
        added = AddedToken(token["content"], single_word=token["single_word"], lstrip=token["lstrip"],
                           rstrip=token["rstrip"], normalized=token["normalized"], special=token["special"])
        (tokenizer.add_special_tokens if token["special"] else tokenizer.add_tokens)([added])
    post_processor = resolve_token_ids(spec["post_processor"], tokenizer.token_to_id)
    final = json.loads(tokenizer.to_str())
    final["post_processor"] = post_processor
    # Loading the finished JSON proves tokenizers accepts it; its own serialization is canonical.
    return Tokenizer.from_str(json.dumps(final)).to_str(pretty=True)


def resolve_token_ids(node: Any, token_to_id: Callable[[str], int | None]) -> Any:
    """``node`` with the ids a post-processor spec leaves out filled in from ``token_to_id``."""
    if isinstance(node, list):
        if len(node) == 2 and isinstance(node[0], str) and node[1] is None:
            return [node[0], _token_id(node[0], token_to_id)]
        return [resolve_token_ids(item, token_to_id) for item in node]
    if isinstance(node, dict):
        resolved = {key: resolve_token_ids(value, token_to_id) for key, value in node.items()}
        if "tokens" in node and "ids" not in node:
            resolved["ids"] = [_token_id(token, token_to_id) for token in node["tokens"]]
        return resolved
    return node


def _token_id(token: str, token_to_id: Callable[[str], int | None]) -> int:
    token_id = token_to_id(token)
    if token_id is None:
        raise ValueError(f"post-processor names {token!r}, which is neither trained nor added")
    return token_id


def _tokenizer_json(spec: dict[str, Any], model: dict[str, Any]) -> str:
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": spec["normalizer"], "pre_tokenizer": spec["pre_tokenizer"], "post_processor": None,
        "decoder": spec["decoder"], "model": model,
    })


def _training_lines(excluded: list[str]) -> Iterator[str]:
    texts = corpora.text_files()
    unknown = set(excluded) - set(texts)
    if unknown:
        raise ValueError(f"exclude_categories names unknown corpus files: {sorted(unknown)}")
    for category, text in texts.items():
        if category not in excluded:
            yield from corpora.split_lines(text)


def _rescored_pieces(trained: list[list], special_tokens: list[str], words: list[str]) -> list[list]:
    """The trained pieces with scores of our own: UnigramTrainer's pieces are the same on every
    run, but their scores and order are not (it sums in hash order, and may list a special token
    twice). Each piece scores the log of its frequency in the training words, rounded so that
    some tie; special tokens come first, scoring 0, as SentencePiece's control pieces do."""
    text = "\n".join(words)
    pieces = sorted({piece for piece, _ in trained} - set(special_tokens))
    scored = [[piece, round(math.log((text.count(piece) + 1) / len(text)), 4)] for piece in pieces]
    return [[token, 0.0] for token in special_tokens] + sorted(scored, key=lambda entry: (-entry[1], entry[0]))


def _pre_tokenized(tokenizer: Any, lines: list[str]) -> list[str]:
    """The words the model is trained on: each line normalized and pre-tokenized."""
    words = []
    for line in lines:
        normalized = tokenizer.normalizer.normalize_str(line) if tokenizer.normalizer else line
        words += [w for w, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalized)] if tokenizer.pre_tokenizer \
            else [normalized]
    return words


def _subword_variants(tokenizer: Any, model: dict[str, Any], lines: list[str]) -> list[str]:
    """Every prefixed/suffixed character the trainer will make, in a fixed order.

    BpeTrainer gives these their ids while walking a hash map, so their ids, and the order of
    merges whose counts tie, change from run to run. Reserving them up front, sorted, makes
    training deterministic; they stay ordinary vocabulary entries, not added tokens.
    """
    prefix = model.get("continuing_subword_prefix") or ""
    suffix = model.get("end_of_word_suffix") or ""
    if not prefix and not suffix:
        return []
    variants: set[str] = set()
    for word in filter(None, _pre_tokenized(tokenizer, lines)):
        variants.update(prefix + char for char in word[1:])
        variants.add((prefix if len(word) > 1 else "") + word[-1] + suffix)
    # A bare character (a one-character word without a suffix) is already in the sorted alphabet.
    return sorted(variant for variant in variants if len(variant) > 1)


def _append_missing(model: dict[str, Any], tokens: tuple[str, ...]) -> None:
    """Adds the tokens a trained model lacks after its last id (a Unigram piece scores 0, as
    SentencePiece's byte pieces do)."""
    vocab = model["vocab"]
    if isinstance(vocab, list):
        known = {piece for piece, _ in vocab}
        vocab += [[token, 0.0] for token in tokens if token not in known]
        return
    next_id = max(vocab.values(), default=-1) + 1
    for token in tokens:
        if token not in vocab:
            vocab[token] = next_id
            next_id += 1


def _is_complete(directory: Path) -> bool:
    return all((directory / filename).is_file() for filename in FILES)
