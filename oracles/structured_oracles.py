"""Oracles of the ``structured`` component: what a schema admits, and what may follow a prefix.

- ``schema_errors(schema, instance)``: `jsonschema` (Draft 2020-12, formats checked; `time` needs
  rfc3339-validator) says whether an instance is valid. It is the truth for sound and complete.
- ``outlines_regex(schema)``: outlines-core's regex for the same schema, with the same whitespace
  policy as impl's default (an optional space after ``,`` and ``:``).
- ``llguidance_grammar(schema)``: llguidance's grammar for the same schema.
- ``TokenVocabulary``: one family's vocabulary bytes (impl's ``vocab_bytes()``), special ids and a
  synthetic EOS id appended after the last id, as both token-level oracles see it.
- ``OutlinesMask`` and ``LlguidanceMask``: the allowed token ids after a token prefix, for a regex,
  over a TokenVocabulary: outlines-core's Index and llguidance's LLMatcher.
- ``ByteAcceptor``: whether a whole string is in an oracle's language (the same engines over a
  vocabulary of the 256 single bytes).

jsonschema is textbound's core; outlines-core, llguidance and numpy are the ``second-oracles``
extra, imported where they are first used, so that without them the module still answers
``schema_errors`` and a mask or acceptor raises MissingExtra naming the extra.

    >>> schema_errors({"type": "integer", "minimum": 3}, 1)
    ['$: 1 is less than the minimum of 3']
    >>> dumps_forms({"a": "é"})[:2]
    ['{"a": "\\\\u00e9"}', '{"a": "é"}']
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import TYPE_CHECKING

import jsonschema

from . import require

if TYPE_CHECKING:
    import llguidance
    import outlines_core

# impl's default whitespace policy, in outlines-core's and llguidance's terms: json.dumps output with
# or without the space after "," and ":".
DUMPS_WHITESPACE = "[ ]?"
# Every way json.dumps writes a value, as impl's default pattern must admit it.
DUMPS_SETTINGS = tuple((separators, ensure_ascii) for separators in ((", ", ": "), (",", ":"))
                       for ensure_ascii in (True, False))
_VALIDATOR = jsonschema.Draft202012Validator


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> jsonschema.Validator:
    return _VALIDATOR(json.loads(schema_json), format_checker=_VALIDATOR.FORMAT_CHECKER)


def _errors(schema: dict, instance) -> list[jsonschema.ValidationError]:
    return list(_validator(json.dumps(schema, sort_keys=True)).iter_errors(instance))


def schema_errors(schema: dict, instance) -> list[str]:
    """Why ``instance`` is not valid for ``schema`` ([] when it is), formats included."""
    return [f"{error.json_path}: {error.message}" for error in _errors(schema, instance)]


def failing_keywords(schema: dict, instance) -> list[str]:
    """The schema keywords ``instance`` breaks, e.g. ``["minimum"]``."""
    return sorted({str(error.validator) for error in _errors(schema, instance)})


# Keywords that bound one quantity from either side: an instance breaking one of a pair tells the
# same thing about a schema's regex as one breaking the other.
_BOUND_PAIRS = {keyword: pair for pair, keywords in (
    ("minimum/maximum", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")),
    ("minLength/maxLength", ("minLength", "maxLength")),
    ("minItems/maxItems", ("minItems", "maxItems")),
    ("minProperties/maxProperties", ("minProperties", "maxProperties"))) for keyword in keywords}


def broken_keyword(schema: dict, instance) -> str:
    """The keyword an invalid ``instance`` is told by: jsonschema's most relevant error (best_match),
    a combinator's failing branches told by the keyword they all break, bounds named by their pair:

        >>> broken_keyword({"type": "integer", "maximum": 3}, 5)
        'minimum/maximum'
        >>> broken_keyword({"anyOf": [{"type": "object", "required": ["a"]}, {"type": "string"}]}, {})
        'required'
    """
    error = jsonschema.exceptions.best_match(_errors(schema, instance))
    leaves = {_BOUND_PAIRS.get(keyword, keyword) for keyword in _leaf_keywords(error)}
    return leaves.pop() if len(leaves) == 1 else str(error.validator)


def _leaf_keywords(error: jsonschema.ValidationError):
    if not error.context:
        yield str(error.validator)
    for branch_error in error.context:
        yield from _leaf_keywords(branch_error)


def dumps_forms(instance) -> list[str]:
    """The four texts json.dumps writes for ``instance`` (both separators, ensure_ascii both ways)."""
    return [json.dumps(instance, separators=separators, ensure_ascii=ensure_ascii)
            for separators, ensure_ascii in DUMPS_SETTINGS]


def outlines_regex(schema: dict) -> str:
    return require("outlines-core").json_schema.build_regex_from_schema(json.dumps(schema), DUMPS_WHITESPACE)


def llguidance_grammar(schema: dict) -> str:
    return require("llguidance").LLMatcher.grammar_from_json_schema(schema, overrides={"whitespace_pattern": DUMPS_WHITESPACE})


def llguidance_regex_grammar(pattern: str) -> str:
    return require("llguidance").LLMatcher.grammar_from_regex(pattern)


@dataclass(frozen=True)
class TokenVocabulary:
    """The bytes of every id, which ids are special, and an EOS id past the last one.

    Special tokens and ids without bytes are never text, so ``text_ids`` leaves them out."""

    token_bytes: tuple[bytes, ...]
    special_ids: frozenset[int]
    encode: Callable[[str], list[int]]  # the family's tokenizer, which ``spell`` prefers

    @property
    def eos_id(self) -> int:
        return len(self.token_bytes)

    @cached_property
    def text_ids(self) -> frozenset[int]:
        return frozenset(i for i, data in enumerate(self.token_bytes) if data and i not in self.special_ids)

    @cached_property
    def outlines(self) -> outlines_core.Vocabulary:
        outlines_core = require("outlines-core")
        by_bytes: dict[bytes, list[int]] = {}
        for token_id in sorted(self.text_ids):
            by_bytes.setdefault(self.token_bytes[token_id], []).append(token_id)
        return outlines_core.Vocabulary(self.eos_id, by_bytes)

    @cached_property
    def llguidance(self) -> llguidance.LLTokenizer:
        llguidance = require("llguidance")
        # Special tokens are given an empty text: llguidance never lets them match the grammar.
        tokens = [b"" if i in self.special_ids else data for i, data in enumerate(self.token_bytes)] + [b"<eos>"]
        return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Tokens(tokens, self.eos_id, self.special_ids, self.spell)))

    @cached_property
    def _spelling(self) -> tuple[dict[bytes, int], int]:
        """The text id of each token's bytes (the lowest of equal ones) and the longest token's length."""
        by_bytes = {self.token_bytes[i]: i for i in sorted(self.text_ids, reverse=True)}
        return by_bytes, max(map(len, by_bytes), default=0)

    def spell(self, text: str) -> list[int]:
        """Tokens whose bytes join to exactly ``text``'s, as llguidance needs for the text a grammar
        forces: the family's own tokenization where it does with text tokens only, else the longest
        text token at each step. (A Metaspace tokenizer's encode starts with "▁", a space the forced
        text does not hold, or a token of no bytes.)

        >>> vocabulary = TokenVocabulary((b"a", b" {", b"{", b'"'), frozenset(), lambda text: [1, 3])
        >>> vocabulary.spell('{"')
        [2, 3]
        """
        ids, data = self.encode(text), text.encode("utf-8")
        if set(ids) <= self.text_ids and b"".join(self.token_bytes[i] for i in ids) == data:
            return ids
        (by_bytes, longest), spelled, start = self._spelling, [], 0
        while start < len(data):
            end = next((end for end in range(min(len(data), start + longest), start, -1) if data[start:end] in by_bytes),
                       None)
            if end is None:
                return ids  # the vocabulary cannot spell it: llguidance sees the tokenizer's own answer
            spelled.append(by_bytes[data[start:end]])
            start = end
        return spelled


@dataclass
class _Tokens:
    """The object llguidance.TokenizerWrapper reads a vocabulary from."""

    tokens: list[bytes]
    eos_token_id: int
    special_ids: frozenset[int]
    encode: Callable[[str], list[int]]  # forced text to tokens
    bos_token_id: int | None = None

    @property
    def special_token_ids(self) -> list[int]:
        return sorted({*self.special_ids, self.eos_token_id})

    def __call__(self, text: str) -> list[int]:
        return self.encode(text)


@cache
def byte_vocabulary() -> TokenVocabulary:
    """The 256 single bytes, ids 0-255: an oracle's view of whole strings."""
    return TokenVocabulary(tuple(bytes([b]) for b in range(256)), frozenset(), lambda text: list(text.encode("utf-8")))


class OutlinesMask:
    """outlines-core's Index for ``pattern`` over a vocabulary; states are Index state ids."""

    name = "outlines-core"

    def __init__(self, pattern: str, vocabulary: TokenVocabulary):
        self.index = require("outlines-core").Index(pattern, vocabulary.outlines)
        self.eos_id = vocabulary.eos_id

    def start(self) -> int:
        return self.index.get_initial_state()

    def advance(self, state: int, token_id: int) -> int | None:
        return self.index.get_next_state(state, token_id)

    def allowed(self, state: int) -> frozenset[int] | None:
        """Allowed ids (EOS left out); None where the oracle gives no view (never, for outlines)."""
        return frozenset(self.index.get_allowed_tokens(state) or ()) - {self.eos_id}

    def complete(self, state: int) -> bool:
        return self.index.is_final_state(state)

    def accepts_ids(self, ids: list[int]) -> bool:
        state = self.start()
        for token_id in ids:
            state = self.advance(state, token_id)
            if state is None:
                return False
        return self.complete(state)


class LlguidanceMask:
    """llguidance's LLMatcher for a grammar over a vocabulary; states are matchers (copied on advance).

    Policy: where the grammar forces text (``compute_ff_tokens()`` is not empty), llguidance allows
    only the first token of that text's canonical tokenization, so its mask there is no view of
    what may follow: ``allowed`` returns None.
    """

    name = "llguidance"

    def __init__(self, grammar: str, vocabulary: TokenVocabulary):
        self.tokenizer = vocabulary.llguidance
        self.grammar = grammar
        self.eos_id = vocabulary.eos_id
        matcher = require("llguidance").LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(f"llguidance cannot compile the grammar: {matcher.get_error()}")
        self._start = matcher

    def start(self) -> llguidance.LLMatcher:
        return self._start

    def advance(self, state: llguidance.LLMatcher, token_id: int) -> llguidance.LLMatcher | None:
        matcher = state.deep_copy()
        return matcher if matcher.consume_token(token_id) and not matcher.is_error() else None

    def allowed(self, state: llguidance.LLMatcher) -> frozenset[int] | None:
        if state.compute_ff_tokens():
            return None
        return mask_ids(state.compute_bitmask()) - {self.eos_id}

    def complete(self, state: llguidance.LLMatcher) -> bool:
        return state.is_accepting()

    def accepts_ids(self, ids: list[int]) -> bool:
        matcher = self._start.deep_copy()  # consumed in place: one copy per string, not per token
        return matcher.consume_tokens(ids) and not matcher.is_error() and matcher.is_accepting()


def mask_ids(bitmask: bytes) -> frozenset[int]:
    """The ids set in a little-endian bitmask (one bit per id)."""
    numpy = require("numpy")
    bits = numpy.unpackbits(numpy.frombuffer(bitmask, numpy.uint8), bitorder="little")
    return frozenset(numpy.flatnonzero(bits).tolist())


class ByteAcceptor:
    """Whether an engine's language contains a whole string: its mask walked byte by byte."""

    def __init__(self, mask):
        self.mask = mask

    def accepts(self, text: str) -> bool:
        return self.mask.accepts_ids(list(text.encode("utf-8")))

    def random_member(self, rng, max_bytes: int) -> str | None:
        """A random string of the engine's language (None when a walk of ``max_bytes`` finds none):
        linear in its length, where drawing from a regex with backtracking can take minutes."""
        state, data = self.mask.start(), b""
        while len(data) < max_bytes:
            if self.mask.complete(state) and rng.random() < 0.2:
                break
            allowed = self.mask.allowed(state)
            if not allowed:
                break
            byte = rng.choice(sorted(allowed))
            state, data = self.mask.advance(state, byte), data + bytes([byte])
        if not self.mask.complete(state):
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None


def outlines_can_build(schema: dict) -> bool:
    """False for schemas with an email format: outlines-core's email regex makes its Index take
    minutes to build (measured: over 5 minutes on 256 byte tokens for corpus files/share_file)."""
    return '"format": "email"' not in json.dumps(schema)


def schema_acceptors(schema: dict) -> dict[str, Callable[[], ByteAcceptor]]:
    """Builders of each oracle's whole-string view of ``schema``, by oracle name."""
    builders = {LlguidanceMask.name: lambda: ByteAcceptor(LlguidanceMask(llguidance_grammar(schema), byte_vocabulary()))}
    if outlines_can_build(schema):
        builders[OutlinesMask.name] = lambda: ByteAcceptor(OutlinesMask(outlines_regex(schema), byte_vocabulary()))
    return builders


def regex_masks(pattern: str, vocabulary: TokenVocabulary, names: tuple[str, ...]) -> dict[str, Callable[[], object]]:
    """Builders of the named oracles' token masks for ``pattern`` over ``vocabulary``."""
    builders = {
        OutlinesMask.name: lambda: OutlinesMask(pattern, vocabulary),
        LlguidanceMask.name: lambda: LlguidanceMask(llguidance_regex_grammar(pattern), vocabulary),
    }
    return {name: builders[name] for name in names}
