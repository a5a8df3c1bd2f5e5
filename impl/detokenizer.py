"""Streaming detokenization: generated ids in, text out as soon as no later id can change it.

The text a tokenizer decodes for a sequence is not the sum of what its tokens decode to alone:
SentencePiece families drop the leading space only at the very start, byte-level and byte-fallback
tokens spell characters across token boundaries, a byte-fallback run that is not valid UTF-8
becomes one U+FFFD per byte (so a later byte can turn text already decoded into U+FFFDs), and
special tokens may be skipped. Rather than re-implement those rules per decoder, the detokenizer
asks the tokenizer's own decoder pipeline, on a short window of recent ids:

- the window is a few *context* ids whose text was already released, then the ids still pending;
  its decoded text starts with the context's text, and what follows is the pending ids' text as
  it reads in mid-sequence;
- of that text, only the part that is *settled* is released: the common prefix with the window
  decoded again with one more *probe* id appended (a lone high byte, which breaks any unfinished
  byte-fallback run, and a plain letter, which ends any word or strip at the end), minus trailing
  U+FFFDs (they may be the start of a character whose next bytes have not arrived);
- once the whole window is settled, it shrinks to its last few ids, which become the context.

So each ``add`` decodes a handful of short windows, however long the stream has been. The window
only grows while the end of the text stays unsettled (a run of byte tokens, trailing U+FFFDs).

What the text means:

- ``text`` is everything ``add`` and ``flush`` have returned. After ``flush``,
  ``prompt_text + text == tokenizer.decode(prompt_ids + ids, skip_special_tokens)``, byte for byte;
  before it, ``prompt_text + text`` is a prefix of that for every continuation of ``ids``.
- ``prompt_text`` is the part of ``decode(prompt_ids)`` that a stream of the prompt would have
  shown: the detokenizer is primed exactly as if ``add(prompt_ids)`` had been called and its text
  discarded. A prompt that ends in the middle of a character (or in an unsettled byte-fallback
  run) leaves that tail out of ``prompt_text``, so the character, completed by the first output
  ids, is part of ``text``. This is vLLM's definition (it primes tokenizers' DecodeStream with the
  prompt's last ids): new text is ``decode(prompt + output)`` minus what the prompt already showed.
  tokenizers' ``DecodeStream(ids=prompt)`` differs in two ways: it counts all of ``decode(prompt)``
  as shown unless that ends in U+FFFD, in which case it counts nothing and its first chunk repeats
  the prompt's text; and it shows a byte-fallback run as soon as it decodes, so a later byte that
  turns the run into U+FFFDs makes it raise.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from weakref import WeakKeyDictionary

REPLACEMENT_CHARACTER = "\ufffd"
CONTEXT_IDS = 4  # released ids kept in the window, so start-of-text rules never reach pending ids


class IncrementalDetokenizer:
    def __init__(self, tokenizer, skip_special_tokens: bool = True, prompt_ids: Iterable[int] | None = None):
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(f"skip_special_tokens must be bool, found {type(skip_special_tokens).__name__}")
        self._tokenizer = tokenizer
        self._skip_special_tokens = skip_special_tokens
        vocabulary = _stream_vocabulary(tokenizer)
        self._probes = vocabulary.probes
        self._skipped = vocabulary.special_ids if skip_special_tokens else frozenset()
        self._window: list[int] = []
        self._released = ""  # the prefix of the window's text already released (context included)
        self._parts: list[str] = []
        self._flushed = False
        self.prompt_text = self._advance(self._checked_ids(prompt_ids or [], "prompt_ids"))

    @property
    def text(self) -> str:
        """All text released so far, the prompt's excluded."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def add(self, ids: Iterable[int]) -> str:
        """The text that ``ids`` settle; an invalid id raises and leaves the stream as it was."""
        if self._flushed:
            raise RuntimeError("add() after flush()")
        return self._release(self._advance(self._checked_ids(ids, "ids")))

    def flush(self) -> str:
        """The held-back tail, released because the stream has ended."""
        if self._flushed:
            return ""
        self._flushed = True
        text = self._decode(self._window)
        tail, self._released = text[len(self._released):], text
        return self._release(tail)

    def _release(self, delta: str) -> str:
        if delta:
            self._parts.append(delta)
        return delta

    def _advance(self, ids: list[int]) -> str:
        if not ids:
            return ""
        window = self._window + ids
        text = self._decode(window)
        settled = self._settled_length(window, text)
        delta = text[len(self._released):settled]
        released = text[:max(settled, len(self._released))]
        if settled == len(text) and len(context := self._context(window)) < len(window):
            window, released = context, self._decode(context)
        self._window, self._released = window, released
        return delta

    def _settled_length(self, window: list[int], text: str) -> int:
        """How much of ``text`` no id appended to ``window`` can change."""
        settled = len(text)
        for probe in self._probes:
            settled = min(settled, _common_prefix_length(text, self._decode(window + [probe])))
        return len(text[:settled].rstrip(REPLACEMENT_CHARACTER))

    def _context(self, window: list[int]) -> list[int]:
        """The window's last CONTEXT_IDS decoded ids (with any skipped ids among them)."""
        kept = 0
        for start in range(len(window) - 1, -1, -1):
            if window[start] not in self._skipped:
                kept += 1
                if kept == CONTEXT_IDS:
                    return window[start:]
        return window

    def _checked_ids(self, ids: Iterable[int], name: str) -> list[int]:
        """``ids`` as a list, after checking each is an id of the tokenizer (so a bad one changes nothing)."""
        if isinstance(ids, (int, str, bytes)):
            raise TypeError(f"{name} must be a list of ids, not a single {type(ids).__name__}: {ids!r}")
        ids = list(ids)
        for position, token_id in enumerate(ids):
            if not isinstance(token_id, int) or self._tokenizer.id_to_token(token_id) is None:
                raise ValueError(f"{name}[{position}] is not a token id of this tokenizer: {token_id!r}")
        return ids

    def _decode(self, ids: list[int]) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=self._skip_special_tokens)


class _StreamVocabulary:
    """What the detokenizer needs to know about a tokenizer's vocabulary, found once per tokenizer."""

    def __init__(self, tokenizer):
        specials = tokenizer.added.special_contents
        self.special_ids = frozenset(
            token_id for token_id in tokenizer.added.by_id if tokenizer.id_to_token(token_id) in specials)
        ordinary = [(token_id, data) for token_id, data in enumerate(tokenizer.vocab_bytes())
                    if data and token_id not in self.special_ids]
        # A lone byte 0x80-0xFF is never valid UTF-8 where a character ends, so it breaks any
        # unfinished byte-fallback run; a plain letter ends any word the decoder still holds open.
        lone_high_byte = next((token_id for token_id, data in ordinary if len(data) == 1 and data[0] >= 0x80), None)
        plain_letter = next((token_id for token_id, data in ordinary if data.isalpha()), None)
        self.probes = tuple(p for p in (lone_high_byte, plain_letter) if p is not None)


_VOCABULARIES: WeakKeyDictionary = WeakKeyDictionary()


def _stream_vocabulary(tokenizer) -> _StreamVocabulary:
    vocabulary = _VOCABULARIES.get(tokenizer)
    if vocabulary is None:
        vocabulary = _VOCABULARIES[tokenizer] = _StreamVocabulary(tokenizer)
    return vocabulary


def _common_prefix_length(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
