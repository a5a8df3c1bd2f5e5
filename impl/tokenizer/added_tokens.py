"""Added tokens: strings matched in the raw or normalized text before the pipeline ever sees them.

tokenizers matches them leftmost-longest in two passes: tokens with ``normalized: false`` on the
raw input, then tokens with ``normalized: true`` on each remaining piece after normalization. An
added token's id is the model's id for the same text when it has one; otherwise ids are handed out
in file order from the model's vocabulary size up, whatever ids the file states (tokenizers only
warns about a mismatch, and so do we not fail: the oracle's numbering is the truth).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import regex

from ..errors import TokenizerFileError
from .fields import child, field, optional
from .normalizer_base import Normalizer
from .patterns import FLAGS, RUST_REGEX_SPACE, RUST_REGEX_WORD

# tokenizers tests these with the Rust regex crate's \w and \s. Used with .match(text, pos)
# (anchored at pos) and .search(text, 0, endpos) (anchored at endpos by \Z, which unlike Python's $
# does not also match before a final newline, as Rust's $ does not).
_STARTS_WITH_WORD = regex.compile(RUST_REGEX_WORD, FLAGS)
_ENDS_WITH_WORD = regex.compile(rf"{RUST_REGEX_WORD}\Z", FLAGS)
_SPACES_AT_END = regex.compile(rf"{RUST_REGEX_SPACE}*\Z", FLAGS)
_SPACES_AT_START = regex.compile(rf"{RUST_REGEX_SPACE}*", FLAGS)


@dataclass(frozen=True)
class AddedToken:
    content: str
    special: bool = False
    normalized: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False

    @classmethod
    def from_json(cls, node: dict, where: str) -> "AddedToken":
        return cls(
            content=field(node, "content", where, str),
            special=optional(node, "special", where, False, bool),
            normalized=optional(node, "normalized", where, True, bool),
            lstrip=optional(node, "lstrip", where, False, bool),
            rstrip=optional(node, "rstrip", where, False, bool),
            single_word=optional(node, "single_word", where, False, bool),
        )


class _LeftmostLongest:
    """Finds non-overlapping occurrences of a set of strings, leftmost first, longest at a position."""

    def __init__(self, patterns: dict[str, int]):
        self._patterns = patterns
        # An alternation sorted longest first is leftmost-longest: the regex engine tries each
        # alternative at the leftmost position in order, and the first that matches is the longest.
        ordered = sorted(patterns, key=lambda s: (-len(s), s))
        self._regex = regex.compile("|".join(regex.escape(s) for s in ordered)) if ordered else None

    def finditer(self, text: str):
        if self._regex is None:
            return
        for match in self._regex.finditer(text):
            yield match.start(), match.end(), self._patterns[match.group()]


@dataclass(frozen=True)
class Segment:
    """A run of the input: either an added token (``token_id`` set) or text for the pipeline."""

    text: str
    token_id: int | None
    at_start: bool


class AddedVocabulary:
    """Every added token, by id, and the two matchers that split text on them."""

    def __init__(self, tokens: list[AddedToken], model_token_to_id: Callable[[str], int | None],
                 model_vocab_size: int, normalizer: Normalizer | None):
        self.by_id: dict[int, AddedToken] = {}
        self.ids: dict[str, int] = {}
        # What decode shows for a normalized added token is its normalized text, as in tokenizers.
        self.decoded_text: dict[int, str] = {}
        next_id = model_vocab_size
        for token in tokens:
            if not token.content:
                continue
            token_id = self.ids.get(token.content)
            if token_id is None:
                token_id = model_token_to_id(token.content)
            if token_id is None:
                token_id, next_id = next_id, next_id + 1
            self.ids[token.content] = token_id
            self.by_id[token_id] = token
        self.special_contents = {t.content for t in self.by_id.values() if t.special}
        raw_patterns: dict[str, int] = {}
        normalized_patterns: dict[str, int] = {}
        for token_id, token in self.by_id.items():
            if not token.normalized:
                raw_patterns[token.content] = token_id
                continue
            text = normalizer.normalize(token.content) if normalizer is not None else token.content
            if text != token.content:
                self.decoded_text[token_id] = text
            # One that normalizes to nothing still matches, emptily, between every two characters:
            # the text is cut there, though the empty token itself is dropped.
            normalized_patterns[text] = token_id
        self._raw = _LeftmostLongest(raw_patterns)
        self._normalized = _LeftmostLongest(normalized_patterns)

    @classmethod
    def from_json(cls, nodes: object, where: str, model_token_to_id, model_vocab_size, normalizer):
        if not isinstance(nodes, list):
            raise TokenizerFileError(where, f"expected a list, found {type(nodes).__name__}")
        tokens = []
        for index, node in enumerate(nodes):
            at = child(where, index)
            token_id = field(node, "id", at, int)
            if token_id < 0:
                raise TokenizerFileError(child(at, "id"), f"negative id {token_id}")
            tokens.append(AddedToken.from_json(node, at))
        return cls(tokens, model_token_to_id, model_vocab_size, normalizer)

    def text_of(self, token_id: int) -> str | None:
        token = self.by_id.get(token_id)
        return None if token is None else self.decoded_text.get(token_id, token.content)

    def split(self, text: str, normalizer: Normalizer | None) -> list[Segment]:
        """Raw-text tokens first; then normalize what is left and match the normalized tokens."""
        segments = []
        for raw in self._split(text, self._raw, at_start=True):
            if raw.token_id is not None:
                segments.append(raw)
                continue
            normalized, keeps_start = normalizer.normalize_piece(raw.text) if normalizer else (raw.text, True)
            segments.extend(self._split(normalized, self._normalized, raw.at_start and keeps_start))
        return segments

    def _split(self, text: str, matcher: _LeftmostLongest, at_start: bool) -> list[Segment]:
        segments = []
        done = 0
        for start, stop, token_id in matcher.finditer(text):
            token = self.by_id[token_id]
            if token.single_word and not self._stands_alone(text, start, stop):
                continue
            if token.lstrip:
                # Searched from the last token on, not from 0: one pass over the text, not one per token.
                start = max(_SPACES_AT_END.search(text, min(done, start), start).start(), done)
            if token.rstrip:
                stop = _SPACES_AT_START.match(text, stop).end()
            if done < start:
                segments.append(Segment(text[done:start], None, at_start and done == 0))
            # Stripping can leave a match empty (a space token whose space an earlier token's
            # rstrip took): tokenizers drops it. The next text starts after the stripped spaces.
            if start < stop:
                segments.append(Segment(text[start:stop], token_id, at_start and start == 0))
            done = stop
        if done < len(text):
            segments.append(Segment(text[done:], None, at_start and done == 0))
        return segments

    @staticmethod
    def _stands_alone(text: str, start: int, stop: int) -> bool:
        before_ok = start == 0 or not _ENDS_WITH_WORD.search(text, start - 1, start)  # the one character before
        after_ok = stop == len(text) or not _STARTS_WITH_WORD.match(text, stop)
        return before_ok and after_ok
