"""llama.cpp's tokenizer through ``llama-cpp-python`` as an ``--impl``: encode, decode and token-piece streaming.

    pip install -e '.[llama-cpp]'       # builds llama.cpp from the PyPI sdist: minutes
    textbound check --impl textbound.adapters.llama_cpp_adapter --component tokenizer,detokenizer

A family's vocabulary becomes a vocabulary-only GGUF made by llama.cpp's own converter
(textbound.server.llama_cpp_source: ``convert_hf_to_gguf.py --vocab-only``), cached under
``$TEXTBOUND_CACHE/llama_cpp`` by the files' digest and the llama-cpp-python version. The converter is
read from ``$TEXTBOUND_LLAMA_CPP_SOURCE`` (a folder holding convert_hf_to_gguf.py, e.g.
``vendor/llama.cpp`` of the extracted sdist), else from the sdist of the installed llama-cpp-python,
fetched once with ``pip download`` into the cache. A family the converter refuses cannot be loaded:
``Tokenizer.from_dir`` raises with the converter's words.

- ``encode(text, add_special_tokens)`` is ``llama_tokenize(add_special=add_special_tokens,
  parse_special=True)`` (added tokens in the text are matched, as tokenizers does).
- ``decode(ids, skip_special_tokens)`` is ``llama_detokenize(remove_special=False,
  unparse_special=not skip_special_tokens)``, its bytes read as UTF-8 with U+FFFD for invalid ones.
  An id outside the vocabulary raises ValueError here: llama.cpp aborts the process on one.
- ``IncrementalDetokenizer`` streams as llama.cpp's server does: each id's
  ``llama_token_to_piece(lstrip=0, special=not skip_special_tokens)`` bytes appended, and the text
  shown up to an unfinished UTF-8 sequence at the end (an incremental UTF-8 decoder holds it;
  invalid bytes become U+FFFD, as the server's JSON writer replaces them).
- ``token_to_id``/``id_to_token`` read ``llama_vocab_get_text``; ``vocab_size`` is
  ``llama_vocab_n_tokens``.

Server entry point: llama-server's own calls, through llama-cpp-python's bindings of them: a
prompt's ``common_tokenize(..., parse_special=true)``, and each sampled token's piece appended with
an unfinished UTF-8 tail held back (tools/server ``validate_utf8``) as the stream goes; the server
itself, over HTTP, is textbound.adapters.server's (nox -s server_llama_cpp).

    >>> tok = Tokenizer.from_dir(path)                                   # doctest: +SKIP
    >>> tok.encode("Hi there"), tok.decode([13048, 1052])                # doctest: +SKIP
    ([13048, 1052], 'Hi there')
"""
from __future__ import annotations

import codecs
import ctypes
import logging
import os
from functools import cache
from pathlib import Path

from ..server import llama_cpp_source
from . import engine_version, require
from ..server.llama_cpp_source import CONVERTER, CONVERTER_PARTS, cache_dir, extract_source

llama_cpp = require("llama-cpp-python", "llama_cpp")
# llama-cpp-python prints llama.cpp's log lines at or above this logger's level: errors only.
logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)

__version__ = engine_version("llama-cpp-python")
SOURCE_ENV = "TEXTBOUND_LLAMA_CPP_SOURCE"
PIECE_BYTES = 256  # first guess of a piece's length; llama_token_to_piece says when it needs more


@cache
def converter_dir() -> Path:
    """The folder holding convert_hf_to_gguf.py: $TEXTBOUND_LLAMA_CPP_SOURCE, else the installed
    version's sdist, fetched and extracted once."""
    if os.environ.get(SOURCE_ENV):
        folder = Path(os.environ[SOURCE_ENV])
        if not (folder / CONVERTER).is_file():
            raise FileNotFoundError(f"${SOURCE_ENV}={folder} holds no {CONVERTER}")
        return folder
    version = llama_cpp.__version__
    return extract_source(version, cache_dir() / f"converter-{version}", CONVERTER_PARTS)


def vocab_gguf(family: Path) -> Path:
    """The family's vocabulary-only GGUF for the installed llama-cpp-python (ValueError on a refusal)."""
    return llama_cpp_source.vocab_gguf(family, llama_cpp.__version__, converter_dir())


class Tokenizer:
    """A family's vocabulary loaded by llama.cpp (vocab_only: no weights)."""

    def __init__(self, gguf: Path):
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(str(gguf).encode("utf-8"), params)
        if not self.model:
            raise ValueError(f"llama.cpp could not load {gguf}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.vocab_size = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self._texts = [llama_cpp.llama_vocab_get_text(self.vocab, i).decode("utf-8", "replace")
                       for i in range(self.vocab_size)]
        self._ids = {text: i for i, text in reversed(list(enumerate(self._texts)))}  # the first id of a text

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(vocab_gguf(Path(path)))

    def __del__(self):
        if getattr(self, "model", None):
            llama_cpp.llama_model_free(self.model)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8  # a first guess: a token covers a byte at least, besides BOS/EOS
        while True:
            tokens = (llama_cpp.llama_token * capacity)()
            count = llama_cpp.llama_tokenize(self.vocab, data, len(data), tokens, capacity, add_special_tokens, True)
            if count >= 0:
                return list(tokens[:count])
            capacity = -count

    def _checked(self, ids) -> list[int]:
        ids = [int(i) for i in ids]
        for position, token in enumerate(ids):
            if not 0 <= token < self.vocab_size:
                raise ValueError(f"invalid token id {token} at position {position}: not in llama.cpp's vocabulary "
                                 f"of {self.vocab_size} (llama.cpp aborts on it)")
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        ids = self._checked(ids)
        tokens = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
        capacity = 16 * len(ids) + 16
        while True:
            buffer = ctypes.create_string_buffer(capacity)
            size = llama_cpp.llama_detokenize(self.vocab, tokens, len(ids), buffer, capacity, False,
                                              not skip_special_tokens)
            if size >= 0:
                return buffer.raw[:size].decode("utf-8", "replace")
            capacity = -size

    def piece(self, token: int, special: bool) -> bytes:
        """``llama_token_to_piece``: the bytes one token adds in a stream."""
        (token,) = self._checked([token])
        capacity = PIECE_BYTES
        while True:
            buffer = ctypes.create_string_buffer(capacity)
            size = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, capacity, 0, special)
            if size >= 0:
                return buffer.raw[:size]
            capacity = -size

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._texts[token_id] if 0 <= token_id < self.vocab_size else None


class IncrementalDetokenizer:
    """Token pieces, shown up to an unfinished UTF-8 sequence (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True, prompt_ids=None):
        self._tokenizer, self._special = tokenizer, not skip_special_tokens
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self.prompt_text = self._decode(prompt_ids or [])
        self.text = ""

    def _decode(self, ids) -> str:
        return self._utf8.decode(b"".join(self._tokenizer.piece(i, self._special) for i in ids))

    def add(self, ids) -> str:
        delta = self._decode(ids)
        self.text += delta
        return delta

    def flush(self) -> str:
        delta = self._utf8.decode(b"", final=True)
        self.text += delta
        return delta
