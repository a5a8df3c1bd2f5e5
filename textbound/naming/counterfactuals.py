"""Counterfactual oracles: the family's tokenizer.json with one stage removed or one option flipped.

An engine that shows no stages is diagnosed by which changed file makes the oracle give the
engine's answer: the normalizer removed reproducing it says "the engine skips the normalizer".

    >>> [c.description for c in counterfactuals({"normalizer": {"type": "NFC"}, "model": {...}})][:1]
    ['skips the normalizer']

The input can be read otherwise too: a text with one class of characters rewritten (``text_readings``:
"reads Unicode spaces as ' '" where the oracle, given "ab cd" for "ab\u00a0cd", gives the engine's
ids), or with an added token the oracle splits off read as text (``added_tokens_read_as_text``).
"""
from __future__ import annotations

import copy
import json
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .shape import BYTE_TOKEN, NAMED_CHARACTERS, char_class

STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
SEQUENCE_MEMBERS = ("normalizers", "pretokenizers", "processors", "decoders")
ADDED_TOKEN_FLAGS = ("normalized", "special", "lstrip", "rstrip", "single_word")  # the first reproducing names a divergence
PREPEND_SCHEMES = ("always", "first", "never")
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
CHOICES = {"prepend_scheme": PREPEND_SCHEMES, "behavior": BEHAVIORS}  # string options and their values
SKIPPED_KEYS = frozenset({"vocab", "merges", "precompiled_charsmap"})  # data, not options
# What str.splitlines breaks lines at besides "\n" and "\r": one class, as engines cutting prompts
# into lines by Unicode's rules read them all alike, whatever their general categories.
LINE_BREAKS = frozenset("\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
LINE_BREAKS_CLASS = "Unicode line breaks"
ASCII_WHITESPACE = frozenset(" \t\n\r")  # read alike by every engine: a difference there is told by its shape
# Where a character read otherwise is put to the engine too ({c}): the words around it are plain ASCII.
READING_CONTEXTS = ("{c}ab", "ab{c}", "ab{c}cd", "1{c}2")
MOST_SPLIT_OFF = 40  # added tokens in a text beyond which reading some of them as text is not tried


@dataclass
class Counterfactual:
    """One changed tokenizer.json (or the family's, read otherwise: ``read_through``) and what the
    change says of an engine it reproduces."""

    description: str
    spec: dict
    read_through: Callable | None = None  # the loaded oracle -> an object answering encode/decode as the engine would

    def load(self):
        """The oracle this variant is: ``tokenizers`` on the changed file, read through ``read_through``."""
        import tokenizers
        tokenizer = tokenizers.Tokenizer.from_str(json.dumps(self.spec))
        return self.read_through(tokenizer) if self.read_through else tokenizer


@dataclass(frozen=True)
class Encoded:
    ids: list[int] | None


class LeftmostJoin:
    """The oracle with its BPE merge ranks ignored: in each word the leftmost adjacent pair of
    symbols that joins into a token merges first, as llama.cpp's SentencePiece tokenizer merges
    when every score is the converter's one placeholder. Built on the oracle's own encoding (its
    normalizer, pre-tokenizer, added tokens and post-processor): each word's tokens are taken apart
    into characters and joined again, left to right, a byte-fallback or unknown token joining
    nothing (a word that is a token stays one under ``ignore_merges``); ids None where a character
    is no token. On Llama 2's vocabulary ``encode(" p").ids``
    is the ids of ``▁▁``, ``p``, where tokenizers gives ``▁``, ``▁p``; decode is the oracle's."""

    def __init__(self, tokenizer, model: dict):
        self.tokenizer = tokenizer
        self.vocab = tokenizer.get_vocab(with_added_tokens=False)
        self.added = set(tokenizer.get_added_tokens_decoder())
        self.unk_token = model.get("unk_token")
        self.ignore_merges = bool(model.get("ignore_merges"))
        self.prefix = model.get("continuing_subword_prefix") or ""
        self.suffix = model.get("end_of_word_suffix") or ""

    def encode(self, text: str, add_special_tokens: bool = True) -> Encoded:
        encoding = self.tokenizer.encode(text, add_special_tokens=add_special_tokens)
        ids: list[int] = []
        word: list[str] = []
        last = None
        for token_id, token, word_id in zip(encoding.ids, encoding.tokens, encoding.word_ids):
            alone = word_id is None or (token_id in self.added and token != self.unk_token)  # the model gives unk
            if alone or word_id != last:
                joined = self._joined(word)
                if joined is None:
                    return Encoded(None)
                ids += joined
                word = []
            if alone:
                ids.append(token_id)
            else:
                word.append(token)
            last = None if alone else word_id
        joined = self._joined(word)
        return Encoded(None if joined is None else ids + joined)

    def _joined(self, tokens: list[str]) -> list[int] | None:
        """A word's tokens taken apart into their characters' symbols (the continuing prefix on all
        but the first, the suffix on the last) and joined leftmost first: a stack of symbols no two
        of which join, each next symbol joined with the top while they make a token."""
        prefix, suffix = self.prefix, self.suffix
        parts: list[str | tuple[str]] = []  # a token's characters, or a token that joins nothing as (token,)
        for at, token in enumerate(tokens):
            if BYTE_TOKEN.fullmatch(token) or token == self.unk_token:  # a byte token joins nothing
                parts.append((token,))
                continue
            text = token.removeprefix(prefix) if at and prefix else token
            parts.extend(text.removesuffix(suffix) if at == len(tokens) - 1 and suffix else text)
        word = "".join(part for part in parts if isinstance(part, str))
        if self.ignore_merges and len(word) == len(parts) and word in self.vocab:
            return [self.vocab[word]]
        stack: list[str | tuple[str]] = []
        for at, part in enumerate(parts):
            if isinstance(part, str):
                part = (prefix if at else "") + part + (suffix if at == len(parts) - 1 else "")
                if part not in self.vocab:
                    return None
            stack.append(part)
            while len(stack) > 1 and isinstance(stack[-1], str) and isinstance(stack[-2], str) \
                    and stack[-2] + stack[-1].removeprefix(prefix) in self.vocab:
                stack[-2:] = [stack[-2] + stack[-1].removeprefix(prefix)]
        return [self.vocab[s] if isinstance(s, str) else self.vocab[s[0]] for s in stack]

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)


def model_readings(spec: dict) -> Iterator[Counterfactual]:
    """The family's model read otherwise: a BPE with its merge ranks ignored (LeftmostJoin)."""
    model = spec.get("model") or {}
    if model.get("type") == "BPE":
        yield Counterfactual("reads the BPE merges as one rank: the leftmost pair joining into a token merges first",
                             spec, lambda tokenizer: LeftmostJoin(tokenizer, model))


def _options(node, path: str) -> Iterator[tuple[str, dict, str]]:
    """(path, node, key) of every option in a pipeline node tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SKIPPED_KEYS:
                continue
            if isinstance(value, (bool, str)) and key != "type":
                yield f"{path}.{key}", node, key
            else:
                yield from _options(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _options(value, f"{path}[{index}]")


def _changed(spec: dict, top: str, change) -> dict:
    """``spec`` with ``change`` applied to a copy of its ``top`` part (the vocabulary and merges,
    never changed, are shared rather than copied)."""
    part = spec.get(top)
    if isinstance(part, dict):
        part = {k: v if k in SKIPPED_KEYS else copy.deepcopy(v) for k, v in part.items()}
    changed = {**spec, top: copy.deepcopy(part) if isinstance(part, list) else part}
    change(changed)
    return changed


def counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """Every one-change variant of ``spec``: a stage removed, one member of a Sequence stage
    removed, one option flipped (booleans, prepend_scheme, a split's behavior), an added-token flag flipped
    on every added token, and the model's boolean options flipped."""
    for stage in STAGES:
        node = spec.get(stage)
        if not node:
            continue
        name = stage.replace("_", " ")
        yield Counterfactual(f"skips the {name}", {**spec, stage: None})
        for key in SEQUENCE_MEMBERS:
            for index, member in enumerate(node.get(key) or []):
                def drop(s, st=stage, k=key, i=index):
                    del s[st][k][i]
                yield Counterfactual(f"skips the {member.get('type')} {name} ({stage}.{key}[{index}])",
                                     _changed(spec, stage, drop))
    for top in (*STAGES, "model"):
        for path, node, key in _options(spec.get(top), top):
            value = node[key]
            choices = [not value] if isinstance(value, bool) else [v for v in CHOICES.get(key, ()) if v != value]
            for choice in choices:
                def flip(s, p=path, k=key, c=choice):
                    _node_at(s, p)[k] = c
                yield Counterfactual(f"reads {path} as {json.dumps(choice)}", _changed(spec, top, flip))
    yield from model_readings(spec)
    yield from added_token_counterfactuals(spec)


def type_counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """The pipeline changes an engine makes by node type rather than by node: one option set alike
    on every node of a type (a pre-tokenizer's and a decoder's Metaspace both), then a stage skipped,
    then every Sequence member of one type skipped, so that an engine ignoring an option is named
    once whichever of its nodes an input meets, and by the option where skipping a stage gives the
    same answer: ``[c.description for c in type_counterfactuals(spec)]`` holds "reads every Split's
    behavior as \"Isolated\"" for a spec with Split pre-tokenizers."""
    groups: dict[tuple[str, str], list[tuple[str, str, object]]] = {}  # (type, key) -> (top, path, value)
    for top in (*STAGES, "model"):
        for path, node, key in _options(spec.get(top), top):
            groups.setdefault((node.get("type", top), key), []).append((top, path, node[key]))
    for (type_name, key), found in groups.items():
        values = [value for _, _, value in found]
        for choice in ((True, False) if isinstance(values[0], bool) else CHOICES.get(key, ())):
            if all(value == choice for value in values):
                continue
            changed = spec
            for top in dict.fromkeys(top for top, _, _ in found):
                def set_all(s, t=top, k=key, c=choice):
                    for where, path, _ in found:
                        if where == t:
                            _node_at(s, path)[k] = c
                changed = _changed(changed, top, set_all)
            yield Counterfactual(f"reads every {type_name}'s {key} as {json.dumps(choice)}", changed)
    for stage in STAGES:
        if spec.get(stage):
            yield Counterfactual(f"skips the {stage.replace('_', ' ')}", {**spec, stage: None})
    for stage in STAGES:
        for key in SEQUENCE_MEMBERS:
            for type_name in dict.fromkeys(m.get("type") for m in (spec.get(stage) or {}).get(key) or []):
                def drop(s, st=stage, k=key, t=type_name):
                    s[st][k] = [m for m in s[st][k] if m.get("type") != t]
                yield Counterfactual(f"skips every {type_name} {stage.replace('_', ' ')}", _changed(spec, stage, drop))
    yield from model_readings(spec)


def added_token_counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """An added-token flag set on every added token, for each flag and value some token lacks:
    ``[c.description for c in added_token_counterfactuals({"added_tokens": [{"normalized": False}]})]``
    == ``["reads every added token's normalized as true", ...]``."""
    tokens = spec.get("added_tokens") or []
    for flag in ADDED_TOKEN_FLAGS:
        for value in (True, False):
            if any(t.get(flag) != value for t in tokens):
                def set_flag(s, f=flag, v=value):
                    for token in s["added_tokens"]:
                        token[f] = v
                yield Counterfactual(f"reads every added token's {flag} as {json.dumps(value)}",
                                     _changed(spec, "added_tokens", set_flag))


def _node_at(spec: dict, path: str) -> dict:
    """The node holding the option at ``path`` ("pre_tokenizer.pretokenizers[1].add_prefix_space")."""
    node = spec
    for part in path.replace("[", ".[").split(".")[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


class AddedTokenReadings:
    """The family's oracle with each added-token flag flipped (``added_token_counterfactuals``; with
    ``pipeline``, each pipeline change of ``type_counterfactuals``), each loaded when first asked (or all at once, ``loaded_all``):
    what names a divergence by the flag or option the engine reads otherwise, whatever the text
    (``reading(answer)`` == "reads every added token's normalized as true" when that variant's
    ``answer`` is the engine's)."""

    def __init__(self, spec: dict, pipeline: bool = False):
        self.variants = list((type_counterfactuals if pipeline else added_token_counterfactuals)(spec))
        self.loaded: dict[str, object] = {}

    @classmethod
    def of(cls, folder, pipeline: bool = False) -> "AddedTokenReadings":
        """The readings of a family folder's tokenizer.json."""
        return cls(json.loads((Path(folder) / "tokenizer.json").read_text(encoding="utf-8")), pipeline)

    def loaded_all(self) -> "AddedTokenReadings":
        """These readings with every variant loaded now (a variant `tokenizers` refuses as None)."""
        for variant in self.variants:
            self._load(variant)
        return self

    def _load(self, variant):
        if variant.description not in self.loaded:
            try:
                self.loaded[variant.description] = variant.load()
            except Exception:  # noqa: BLE001 - a variant tokenizers refuses explains nothing
                self.loaded[variant.description] = None
        return self.loaded[variant.description]

    def reading(self, answer) -> str | None:
        """The first variant whose ``answer(tokenizer)`` is truthy; None when none is."""
        return next((description for description, _ in self.matching(answer)), None)

    def matching(self, answer) -> Iterator[tuple[str, object]]:
        """(description, tokenizer) of each variant whose ``answer(tokenizer)`` is truthy, in order."""
        for variant in self.variants:
            tokenizer = self._load(variant)
            if tokenizer is not None and answer(tokenizer):
                yield variant.description, tokenizer


def reproducing(spec: dict, answer) -> list[str]:
    """The descriptions of the counterfactual oracles whose ``answer(tokenizer)`` is truthy
    (it compares their output with the engine's); a variant `tokenizers` refuses to load is left out."""
    found = []
    for counterfactual in counterfactuals(spec):
        try:
            tokenizer = counterfactual.load()
            if answer(tokenizer):
                found.append(counterfactual.description)
        except BaseException as exc:  # noqa: BLE001 - tokenizers panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
    return found


def reading_class(char: str) -> str:
    """The class a rewritten character is named by: ``reading_class("\\u2028") == "Unicode line
    breaks"`` (as NEL's is, a control character), else its class in the shape of a difference."""
    return LINE_BREAKS_CLASS if char in LINE_BREAKS else char_class(char)


@dataclass(frozen=True)
class TextReading:
    """Some characters of a text read otherwise before tokenizing: each as ``into``, or (``into``
    None) the first dropped where the text starts with one:
    ``TextReading("reads Unicode spaces as ' '", ("\\u00a0",), " ").rewrite("a\\u00a0b") == "a b"``."""

    description: str
    chars: tuple[str, ...]
    into: str | None

    def rewrite(self, text: str) -> str:
        if self.into is None:
            return text[1:] if text.startswith(self.chars) else text
        return "".join(self.into if c in self.chars else c for c in text)

    def probes(self) -> list[str]:
        """Texts the engine must read the same way too: each character in a few contexts."""
        return [context.format(c=c) for c in self.chars for context in READING_CONTEXTS]


def text_readings(text: str) -> Iterator[TextReading]:
    """Each way an engine may read a class of the text's spaces, separators, control and format
    characters (ASCII whitespace aside) before tokenizing that changes it: read as ' ' or as '\\n',
    the first one dropped at the start, every one dropped; each class whole, then each of its
    characters alone. A class's own reading comes first (spaces as ' ', line breaks as '\\n', others
    dropped), so that where a family's normalizer makes several alike, the same one names a bug
    whatever the context: ``next(text_readings("ab\\u00a0cd")).description == "reads Unicode spaces as ' '"``."""
    classes: dict[str, list[str]] = {}
    for char in dict.fromkeys(text):
        if unicodedata.category(char)[0] in "ZC" and char not in ASCII_WHITESPACE:
            classes.setdefault(reading_class(char), []).append(char)
    for name, chars in classes.items():
        descriptions = {**{into: f"reads {name} as {NAMED_CHARACTERS[into]}" for into in (" ", "\n")},
                        None: f"drops {name} at the start", "": f"drops {name}"}
        order = (" ", "\n", None, "") if unicodedata.category(chars[0]) == "Zs" else \
            ("\n", " ", None, "") if name == LINE_BREAKS_CLASS else (None, "", " ", "\n")
        for group in dict.fromkeys([tuple(chars), *((c,) for c in chars)]):
            for into in order:
                reading = TextReading(descriptions[into], group, into)
                if reading.rewrite(text) != text:
                    yield reading


def plain_ids(tokenizer, text: str) -> list[int]:
    """The ids a `tokenizers.Tokenizer` gives ``text`` read wholly as text (no added token split
    off, nothing post-processed): its normalizer, pre-tokenizer and model, stage by stage."""
    if not text:
        return []
    normalized = tokenizer.normalizer.normalize_str(text) if tokenizer.normalizer is not None else text
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(normalized) if tokenizer.pre_tokenizer is not None \
        else [(normalized, None)]
    return [token.id for piece, _ in pieces for token in tokenizer.model.tokenize(piece)]


def added_tokens_read_as_text(tokenizer, text: str, actual: list[int]) -> tuple[tuple[int, int], ...] | None:
    """Where (their spans in ``text``, spaces an lstrip or rstrip takes included) the added tokens
    are that the oracle splits off and that, read as text instead and joined to the text around
    them, make the oracle's ids ``actual`` (None where no choice of them does): ((3, 6),) for
    "<s><s>" encoded as "<s>" then "<s>" as text.
    The oracle's own ids must come out of its split the same way (they do not where a Metaspace
    prepends to the first piece alone: nothing is said there)."""
    actual = list(actual)
    encoding = tokenizer.encode(text, add_special_tokens=False)
    added = tokenizer.get_added_tokens_decoder()
    # an unknown token is an added token too, but it stands for text of its own, not for its content
    split_off = [(start, end, token_id) for token_id, (start, end) in zip(encoding.ids, encoding.offsets)
                 if token_id in added and added[token_id].content.casefold() in text[start:end].casefold()]
    if len(split_off) > MOST_SPLIT_OFF:
        return None
    segment = cache(lambda start, end: tuple(plain_ids(tokenizer, text[start:end])))

    def joined(kept) -> list[int]:
        ids, at = [], 0
        for start, end, token_id in (split_off[k] for k in kept):
            ids += [*segment(at, start), token_id]
            at = end
        return ids + list(segment(at, len(text)))

    if joined(range(len(split_off))) != encoding.ids or actual == encoding.ids:
        return None

    @cache
    def kept_after(last: int, position: int) -> tuple[int, ...] | None:
        """The split-off tokens after ``last`` (-1: from the start) kept split off such that
        ``actual[position:]`` is what the text after ``last`` gives; None where no choice does."""
        at = split_off[last][1] if last >= 0 else 0
        if tuple(actual[position:]) == segment(at, len(text)):
            return ()
        for k in range(last + 1, len(split_off)):
            start, _, token_id = split_off[k]
            before = segment(at, start)
            after = position + len(before)
            if tuple(actual[position:after]) == before and actual[after:after + 1] == [token_id] \
                    and (rest := kept_after(k, after + 1)) is not None:
                return (k, *rest)
        return None

    kept = kept_after(-1, 0)
    return None if kept is None else tuple((start, end) for k, (start, end, _) in enumerate(split_off) if k not in kept)
