"""`tiktoken` as an ``--impl``: byte-level families' tokenizer.json converted to tiktoken encodings
(ranks and the pre-tokenizer pattern, oracles/tiktoken_oracle.py), for the ``tokenizer`` and
``detokenizer`` components.

    textbound check --impl textbound.adapters.tiktoken_adapter --family qwen3 --component tokenizer,detokenizer

What tiktoken itself leaves to its caller is done here the plainest way a server would: NFC with
Python's ``unicodedata`` where the family normalizes so, the post-processor's ids around the text
for ``add_special_tokens``, special tokens dropped by id for ``skip_special_tokens``, and streaming
as tiktoken users stream: each token's bytes fed to an incremental UTF-8 decoder that holds an
unfinished character back and replaces invalid bytes (``errors="replace"``).

Server entry point: none (tiktoken ships no server): its ``Encoding`` encode and byte decode as a
program embedding it calls them, with the steps a server would add around them (NFC, the
post-processor's ids, special ids skipped, the unfinished UTF-8 tail held while streaming) done
here as listed above.

A family tiktoken cannot express (a SentencePiece or WordPiece model, a prefix space, a normalizer
other than NFC...) fails to load with NotExpressible naming the part:

    >>> tokenizer = Tokenizer.from_dir("models/qwen3")
    >>> tokenizer.encode("Hello world"), tokenizer.id_to_token(1879)
    ([9707, 1879], 'Ġworld')
    >>> stream = IncrementalDetokenizer(tokenizer)
    >>> stream.add([9707]), stream.add([1879]), stream.flush()
    ('Hello', ' world', '')
"""
from __future__ import annotations

import codecs
from collections.abc import Iterable
from pathlib import Path

from textbound.oracles.tiktoken_oracle import NotExpressible, TiktokenVocabulary

from . import engine_version, require

require("tiktoken")
__version__ = engine_version("tiktoken")
__all__ = ["IncrementalDetokenizer", "NotExpressible", "Tokenizer"]


class Tokenizer:
    """A family's tokenizer as a tiktoken encoding, behind impl's Tokenizer names."""

    def __init__(self, vocabulary: TiktokenVocabulary):
        self.vocabulary = vocabulary
        self._ids = {token: token_id for token_id, token in vocabulary.tokens.items()}

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(TiktokenVocabulary.from_dir(path))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, not {type(text).__name__}")
        return self.vocabulary.encode(text, add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.vocabulary.decode(list(ids), skip_special_tokens)

    def token_bytes(self, token_id: int, skip_special_tokens: bool = False) -> bytes:
        return self.vocabulary.decode_bytes([token_id], skip_special_tokens)

    def vocab_bytes(self) -> list[bytes]:
        """The bytes of every id from 0 to the largest, b"" where the vocabulary has none."""
        tokens = self.vocabulary.tokens
        return [self.token_bytes(i) if i in tokens else b"" for i in range(max(tokens, default=-1) + 1)]

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.vocabulary.tokens.get(token_id)

    @property
    def vocab_size(self) -> int:
        return len(self._ids)


class IncrementalDetokenizer:
    """Generated ids to text through an incremental UTF-8 decoder: ``add(ids)`` returns the
    characters their bytes complete, ``flush()`` the held-back tail (U+FFFD for bytes that never
    became a character); ``prompt_text`` is what the prompt's bytes showed."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True,
                 prompt_ids: Iterable[int] | None = None):
        self._tokenizer = tokenizer
        self._skip_special_tokens = skip_special_tokens
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._flushed = False
        self.prompt_text = self._utf8.decode(self._bytes(prompt_ids or [], "prompt_ids"))

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def add(self, ids: Iterable[int]) -> str:
        if self._flushed:
            raise RuntimeError("add() after flush()")
        return self._record(self._utf8.decode(self._bytes(ids, "ids")))

    def flush(self) -> str:
        if self._flushed:
            return ""
        self._flushed = True
        return self._record(self._utf8.decode(b"", final=True))

    def _record(self, delta: str) -> str:
        self._parts.append(delta)
        return delta

    def _bytes(self, ids: Iterable[int], name: str) -> bytes:
        if isinstance(ids, (int, str, bytes)):
            raise TypeError(f"{name} must be a list of ids, not a single {type(ids).__name__}: {ids!r}")
        try:
            return self._tokenizer.vocabulary.decode_bytes(list(ids), self._skip_special_tokens)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
