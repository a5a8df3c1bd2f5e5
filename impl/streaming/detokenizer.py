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
  decoded again with one more *probe* id appended, minus trailing U+FFFDs (they may be the start
  of a character whose next bytes have not arrived). The probe is a lone byte 0x80-0xFF where the
  vocabulary has one: it breaks any unfinished byte-fallback run, and like any further id it ends
  whatever a decoder treats specially in the last token (BPEDecoder's suffix, say). Without
  one, the probe is a plain letter;
- once the whole window is settled, it shrinks to its last few ids, which become the context.

So each ``add`` decodes a handful of short windows, however long the stream has been. While the
end of the text stays unsettled (a long run of byte tokens, trailing U+FFFDs) the window grows,
and an ``add`` of lone bytes (the ids of such a run) first decodes, after each new id, only the
last few ids, from the last one that starts a character. A lone byte cannot end a byte-fallback
run, so if those ids are unsettled the window is too (an unfinished character, a run or invalid
bytes at their end are at its end too, as they start on a character boundary) and its settled
text has not grown; the whole window is decoded only once they settle. So a run of n byte tokens
costs O(n) decoding in all, not O(n^2).

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

from collections.abc import Iterable
from weakref import WeakKeyDictionary

from ..tokenizer.decoders import REPLACEMENT_CHARACTER

CONTEXT_IDS = 4  # released ids kept in the window, so start-of-text rules never reach pending ids
TAIL_IDS = 8  # how far back from the end to look for a character boundary


class IncrementalDetokenizer:
    """One generation's ids, streamed to text: ``add(ids)`` returns the newly settled text,
    ``flush()`` the rest once generation ends; ``text`` is all of it and ``prompt_text`` what the
    prompt showed (see the module docstring).

    >>> from textbound.impl import Tokenizer
    >>> tokenizer = Tokenizer({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3}, "merges": ["a b"]}})
    >>> detokenizer = IncrementalDetokenizer(tokenizer)
    >>> detokenizer.add([2]), detokenizer.add([3]), detokenizer.flush(), detokenizer.text
    ('ab', ' c', '', 'ab c')
    """

    def __init__(self, tokenizer, skip_special_tokens: bool = True, prompt_ids: Iterable[int] | None = None):
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(f"skip_special_tokens must be bool, found {type(skip_special_tokens).__name__}")
        self._tokenizer = tokenizer
        self._skip_special_tokens = skip_special_tokens
        self._vocabulary = _stream_vocabulary(tokenizer)
        self._probe = self._vocabulary.probe
        self._skipped = self._vocabulary.special_ids if skip_special_tokens else frozenset()
        self._window: list[int] = []
        self._released = ""  # the prefix of the window's text already released (context included)
        self._unsettled = False  # whether the window's text ends in text still held back
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
        return self._record(self._advance(self._checked_ids(ids, "ids")))

    def flush(self) -> str:
        """The held-back tail, released because the stream has ended."""
        if self._flushed:
            return ""
        text = self._decode(self._window)
        tail, self._released, self._flushed = text[len(self._released):], text, True
        return self._record(tail)

    def _record(self, delta: str) -> str:
        if delta:
            self._parts.append(delta)
        return delta

    def _advance(self, ids: list[int]) -> str:
        if not ids:
            return ""
        window = self._window + ids
        if self._unsettled and all(self._vocabulary.is_lone_byte(token_id) for token_id in ids) and all(
                self._stays_unsettled(window, end) for end in range(len(self._window) + 1, len(window) + 1)):
            # More bytes of a run that is still unsettled: nothing new can be released yet.
            self._window = window
            return ""
        text = self._decode(window)
        settled = self._settled_length(window, text)
        delta = text[len(self._released):settled]
        released = text[:max(settled, len(self._released))]
        self._unsettled = settled < len(text)
        if not self._unsettled and len(context := self._context(window)) < len(window):
            window, released = context, self._decode(context)
        self._window, self._released = window, released
        return delta

    def _settled_length(self, window: list[int], text: str) -> int:
        """How much of ``text`` no id appended to ``window`` can change."""
        settled = len(text)
        if self._probe is not None:
            settled = _common_prefix_length(text, self._decode(window + [self._probe]))
        return len(text[:settled].rstrip(REPLACEMENT_CHARACTER))

    def _stays_unsettled(self, window: list[int], end: int) -> bool:
        """Whether ``window[:end]`` is shown unsettled by its last ids alone, decoded from the last
        character boundary among them (False when there is none to start from)."""
        bounds = range(end - 1, max(end - TAIL_IDS, 0), -1)
        start = next((i for i in bounds
                      if window[i] not in self._skipped and self._vocabulary.starts_character(window[i])), None)
        if start is None:
            return False
        tail = window[start:end]
        text = self._decode(tail)
        return self._settled_length(tail, text) < len(text)

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
        self._token_bytes = tokenizer.token_bytes
        self._bytes: dict[int, bytes] = {}
        self.probe = self._find_probe(tokenizer)

    def bytes_of(self, token_id: int) -> bytes:
        data = self._bytes.get(token_id)
        if data is None:
            data = self._bytes[token_id] = self._token_bytes(token_id)
        return data

    def is_lone_byte(self, token_id: int) -> bool:
        return len(self.bytes_of(token_id)) == 1

    def starts_character(self, token_id: int) -> bool:
        """Whether the token's bytes begin with the first byte of a character (not 0x80-0xBF)."""
        data = self.bytes_of(token_id)
        return bool(data) and not 0x80 <= data[0] <= 0xBF

    def _find_probe(self, tokenizer) -> int | None:
        """The first lone byte 0x80-0xFF, else the first plain letter (byte tokens come first in
        byte-level and byte-fallback vocabularies, so the search is short where it matters)."""
        plain_letter = None
        for token_id in range(tokenizer.max_id + 1):
            if token_id in self.special_ids or tokenizer.id_to_token(token_id) is None:
                continue
            data = self.bytes_of(token_id)
            if len(data) == 1 and data[0] >= 0x80:
                return token_id
            if plain_letter is None and data.isalpha():
                plain_letter = token_id
        return plain_letter


_VOCABULARIES: WeakKeyDictionary = WeakKeyDictionary()


def _stream_vocabulary(tokenizer) -> _StreamVocabulary:
    vocabulary = _VOCABULARIES.get(tokenizer)
    if vocabulary is None:
        vocabulary = _VOCABULARIES[tokenizer] = _StreamVocabulary(tokenizer)
    return vocabulary


def _common_prefix_length(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
