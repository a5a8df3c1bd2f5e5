"""`tiktoken` as a second oracle for byte-level vocabularies: a tokenizer.json converted to a
tiktoken encoding (ranks and the pre-tokenizer pattern), and Mistral's Tekken vocabularies (the
file a family was converted from, oracles/mistral_source.py) read by mistral-common's own
Tekkenizer (which is tiktoken under the hood).

The conversion (``TiktokenVocabulary.from_tokenizer_json``) is exact or refused: a byte-level BPE
whose merges are applied in id order becomes ranks ``bytes -> id`` (tiktoken merges the adjacent
pair whose concatenation has the lowest rank, tokenizers the pair listed first: the same when the
merges come in id order), its Split regex (or ByteLevel's GPT-2 regex) the pattern, and its added
tokens tiktoken's special tokens. Anything tiktoken cannot express (another model or pre-tokenizer,
a prefix space, an added token with lstrip/rstrip/single_word, a normalizer other than NFC, which
is applied with Python's ``unicodedata`` first) raises NotExpressible naming the part:

    >>> vocabulary = TiktokenVocabulary.from_tokenizer_json(json.load(open("qwen3/tokenizer.json")), "qwen3")
    >>> vocabulary.encode("Hello world")
    [9707, 1879]
    >>> TiktokenVocabulary.from_tokenizer_json(json.load(open("llama2/tokenizer.json")), "llama2")
    NotExpressible: llama2: tiktoken needs a byte-level BPE model without dropout, byte fallback or affixes
"""
from __future__ import annotations

import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.metadata import version
from pathlib import Path
from typing import Any

from . import require
from .mistral_source import MISTRAL_COMMON, TEKKEN, source_file

# ByteLevel's own regex (use_regex=True), as tokenizers spells it.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
NORMALIZERS = {None: None, "NFC": "NFC"}  # tokenizer.json normalizer type -> unicodedata form


class NotExpressible(ValueError):
    """A tokenizer.json that a tiktoken encoding cannot reproduce; the message names the part."""


@cache
def byte_level_alphabet() -> dict[str, int]:
    """ByteLevel's character for each byte, inverted: "Ġ" -> 0x20, "a" -> 0x61."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in printable]
    return {**{chr(b): b for b in printable}, **{chr(256 + n): b for n, b in enumerate(shifted)}}


@cache
def _to_latin1() -> dict[int, str]:
    """str.translate table from ByteLevel characters to the Latin-1 character of their byte; the
    Latin-1 characters ByteLevel never uses go to U+FFFF, which Latin-1 cannot encode."""
    table = {code: "\uffff" for code in range(256)}
    table.update({ord(char): chr(byte) for char, byte in byte_level_alphabet().items()})
    return table


def token_bytes_of(token: str) -> bytes | None:
    """The bytes a byte-level token string spells ("Ġthe" -> b" the"); None if it is not byte-level."""
    try:
        return token.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError:
        return None


@dataclass(frozen=True)
class TiktokenVocabulary:
    """A byte-level tokenizer.json as a tiktoken encoding, with what tiktoken leaves to its caller:
    the normalizer, the ids a post-processor adds, which added tokens are special, and the
    tokenizer.json token strings (for id_to_token)."""

    encoding: Any  # tiktoken.Encoding
    tokens: dict[int, str]
    special_ids: frozenset[int]
    normalization: str | None
    prefix_ids: tuple[int, ...]
    suffix_ids: tuple[int, ...]

    @classmethod
    def from_dir(cls, folder: str | Path) -> "TiktokenVocabulary":
        path = Path(folder) / "tokenizer.json"
        return cls.from_tokenizer_json(json.loads(path.read_text(encoding="utf-8")), str(folder))

    @classmethod
    def from_tokenizer_json(cls, spec: dict, name: str) -> "TiktokenVocabulary":
        def refuse(why: str) -> NotExpressible:
            return NotExpressible(f"{name}: {why}")

        model = spec.get("model") or {}
        if model.get("type") != "BPE" or model.get("dropout") or model.get("byte_fallback") \
                or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise refuse("tiktoken needs a byte-level BPE model without dropout, byte fallback or affixes")
        normalizer = spec.get("normalizer")
        normalizer_type = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
        if normalizer_type not in NORMALIZERS:
            raise refuse(f"normalizer {normalizer_type}: only NFC can be applied before tiktoken")
        if (spec.get("decoder") or {}).get("type") != "ByteLevel":
            raise refuse("decoder is not ByteLevel")
        pattern = _pattern(spec.get("pre_tokenizer"), refuse)
        prefix_ids, suffix_ids = _template(spec.get("post_processor"), refuse)

        tokens: dict[int, str] = {token_id: token for token, token_id in model["vocab"].items()}
        specials: dict[str, int] = {}
        special_ids = set()
        for added in spec.get("added_tokens", []):
            if added["lstrip"] or added["rstrip"] or added["single_word"]:
                raise refuse(f"added token {added['content']!r} has lstrip, rstrip or single_word")
            if added["normalized"] and normalizer_type:
                raise refuse(f"added token {added['content']!r} is matched on normalized text")
            specials[added["content"]] = added["id"]
            tokens[added["id"]] = added["content"]
            if added["special"]:
                special_ids.add(added["id"])
        ranks = {}
        for token_id, token in tokens.items():
            if token_id in specials.values():
                continue
            data = token_bytes_of(token)
            if data is None:
                raise refuse(f"vocabulary token {token!r} (id {token_id}) is not byte-level")
            ranks[data] = token_id
        missing = [b for b in range(256) if bytes([b]) not in ranks]
        if missing:
            raise refuse(f"no token for byte 0x{missing[0]:02X} ({len(missing)} bytes missing)")
        _check_merge_order(model.get("merges", []), model["vocab"], refuse)
        # Imported once the spec is known to be expressible: a family tiktoken cannot read needs no tiktoken.
        encoding = require("tiktoken").Encoding(f"textbound-{Path(name).name}", pat_str=pattern, mergeable_ranks=ranks,
                                                  special_tokens=specials)
        return cls(encoding, tokens, frozenset(special_ids), NORMALIZERS[normalizer_type], prefix_ids, suffix_ids)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if self.normalization:
            text = self._normalized(text)
        ids = self.encoding.encode(text, allowed_special="all")
        return [*self.prefix_ids, *ids, *self.suffix_ids] if add_special_tokens else ids

    def _normalized(self, text: str) -> str:
        """``text`` normalized between added tokens, which tokenizers matches on the raw text first
        (whole-text NFC would fuse "<|endoftext|>" and a following U+0338 into "<|endoftext|≯")."""
        added = self._added_pattern
        if added is None:
            return unicodedata.normalize(self.normalization, text)
        parts = added.split(text)  # the pattern's group keeps each added token, at odd positions
        return "".join(part if odd else unicodedata.normalize(self.normalization, part)
                       for odd, part in zip(itertools.cycle((False, True)), parts))

    @cached_property
    def _added_pattern(self) -> re.Pattern | None:
        contents = sorted(self.encoding.special_tokens_set, key=len, reverse=True)
        return re.compile("(" + "|".join(map(re.escape, contents)) + ")") if contents else None

    def decode_bytes(self, ids: list[int], skip_special_tokens: bool = False) -> bytes:
        for position, token_id in enumerate(ids):
            if token_id not in self.tokens:
                raise ValueError(f"invalid token id {token_id!r} at position {position}")
        if skip_special_tokens:
            ids = [token_id for token_id in ids if token_id not in self.special_ids]
        return self.encoding.decode_bytes(ids)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.decode_bytes(ids, skip_special_tokens).decode("utf-8", errors="replace")


def _pattern(pre_tokenizer: dict | None, refuse) -> str:
    """tiktoken's pattern for a ByteLevel pre-tokenizer, alone or after one isolating Split."""
    steps = pre_tokenizer.get("pretokenizers", []) if pre_tokenizer and pre_tokenizer["type"] == "Sequence" \
        else [pre_tokenizer]
    *split, byte_level = steps or [None]
    if not byte_level or byte_level.get("type") != "ByteLevel" or len(split) > 1:
        raise refuse(f"pre_tokenizer {_type_of(pre_tokenizer)}: tiktoken needs ByteLevel, or Split(Regex, "
                     f"Isolated) then ByteLevel")
    if byte_level.get("add_prefix_space"):
        raise refuse("ByteLevel add_prefix_space: tiktoken adds no prefix space")
    if not split:
        if not byte_level.get("use_regex", True):
            raise refuse("ByteLevel without a regex splits nothing: tiktoken needs a pattern")
        return GPT2_PATTERN
    (step,) = split
    if step.get("type") != "Split" or "Regex" not in step.get("pattern", {}) or step.get("behavior") != "Isolated" \
            or step.get("invert") or byte_level.get("use_regex", True):
        raise refuse(f"pre_tokenizer {_type_of(pre_tokenizer)}: only Split(Regex, Isolated) then "
                     f"ByteLevel(use_regex=False) carries a tiktoken pattern")
    return step["pattern"]["Regex"]


def _template(post_processor: dict | None, refuse) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids add_special_tokens puts before and after the text (ByteLevel adds none)."""
    processors = post_processor.get("processors", []) if post_processor and post_processor["type"] == "Sequence" \
        else [post_processor] if post_processor else []
    prefix: list[int] = []
    suffix: list[int] = []
    for processor in processors:
        if processor["type"] == "ByteLevel":
            continue
        if processor["type"] != "TemplateProcessing":
            raise refuse(f"post_processor {processor['type']}: only TemplateProcessing and ByteLevel")
        seen_text = False
        for piece in processor["single"]:
            if "Sequence" in piece:
                seen_text = True
                continue
            ids = processor["special_tokens"][piece["SpecialToken"]["id"]]["ids"]
            (suffix if seen_text else prefix).extend(ids)
    return tuple(prefix), tuple(suffix)


def _check_merge_order(merges: list, vocab: dict[str, int], refuse) -> None:
    """tiktoken ranks merges by the id of what they make: the merges must come in that order."""
    last = -1
    for index, merge in enumerate(merges):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        made = vocab.get(left + right)
        if made is None:
            raise refuse(f"merge #{index} ({left!r} {right!r}) makes a token the vocabulary lacks")
        if made < last:
            raise refuse(f"merge #{index} ({left!r} {right!r}) makes id {made} after a merge made id {last}: "
                         f"tiktoken would apply it earlier")
        last = made


def _type_of(node: dict | None) -> str:
    if not node:
        return "None"
    if node.get("type") == "Sequence":
        return "Sequence[" + ", ".join(_type_of(n) for n in node.get("pretokenizers", [])) + "]"
    return node.get("type", "?")


class TiktokenOracle:
    """tiktoken's ids and text for a family, without special tokens: encode matches added tokens'
    text as tokenizers does (tiktoken's special tokens); decode keeps special tokens."""

    def __init__(self, encode, decode, version_text: str):
        self.encode, self.decode, self.version = encode, decode, version_text

    @classmethod
    def for_family(cls, folder: str | Path) -> "TiktokenOracle | None":
        """Mistral's Tekkenizer for a Tekken family, else the family's tokenizer.json converted;
        None when tiktoken cannot express it."""
        source = source_file(folder, TEKKEN)
        if source is not None:
            return cls.tekkenizer(source)
        try:
            vocabulary = TiktokenVocabulary.from_dir(folder)
        except NotExpressible:
            return None
        return cls(vocabulary.encode, vocabulary.decode,
                   f"tiktoken {version('tiktoken')} (ranks and pattern from tokenizer.json)")

    @classmethod
    def tekkenizer(cls, tekken_file: Path) -> "TiktokenOracle":
        """mistral-common's own tokenizer of a tekken.json: tiktoken over its ranks, ids shifted
        past the special tokens, which it never matches in text and decodes as their names."""
        require("tiktoken")
        require(MISTRAL_COMMON)
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tekkenizer = Tekkenizer.from_file(tekken_file)
        return cls(lambda text: tekkenizer.encode(text, bos=False, eos=False),
                   lambda ids: tekkenizer.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP),
                   f"tiktoken {version('tiktoken')} (mistral-common {version('mistral-common')} Tekkenizer)")
