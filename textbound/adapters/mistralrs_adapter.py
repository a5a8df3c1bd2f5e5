"""mistral.rs's GGUF tokenizer through its Python API (``mistralrs``) as an ``--impl`` of the ``tokenizer``
component.

    pip install -e '.[mistralrs]'
    textbound check --impl textbound.adapters.mistralrs_adapter --component tokenizer --family qwen3

Server entry point: ``Runner.tokenize_text`` and ``Runner.detokenize_text``, the engine requests
behind ``mistralrs-server``'s ``POST /tokenize`` and ``POST /detokenize`` (below).

mistral.rs serving a GGUF builds its tokenizer from the file's ``tokenizer.ggml.*`` keys
(``mistralrs_core::gguf::gguf_tokenizer``: a BPE or SentencePiece-style ``tokenizers`` model, its
pre-tokenizer, decoder and added tokens its own), not from a tokenizer.json. The family's GGUF is the
tiny model llama-server's field rows serve (textbound.server.tiny_model: the family's vocabulary
converted by llama.cpp's ``convert_hf_to_gguf.py --vocab-only``, on two layers of random weights), so
a divergence shared with llama-server's row on that family is the converter's, and one only here is
mistral.rs's reading of the file. It is loaded as ``mistralrs-server --gguf`` loads one:
``Runner(Which.GGUF(quantized_model_id=FOLDER, quantized_filename=FILE))``, on the CPU.

- ``encode(text, add_special_tokens)`` is ``Runner.tokenize_text(text, add_special_tokens, None)``,
  the engine's ``Request::Tokenize``, which the server's ``POST /tokenize`` sends too (pre-step: the
  text as given; post-step: none);
- ``decode(ids, skip_special_tokens)`` is ``Runner.detokenize_text``, the engine's
  ``Request::Detokenize`` behind ``POST /detokenize``. An id outside the vocabulary raises
  ValueError here, before the engine sees it;
- ``token_to_id``, ``id_to_token`` and ``vocab_size`` read the GGUF's ``tokenizer.ggml.tokens`` (the
  file mistral.rs reads; the Python API exposes no vocabulary).

Streaming (the server's incremental detokenizer runs inside generation only) is not exposed by the
Python API: the detokenizer component is not provided.

    >>> tok = Tokenizer.from_dir(Path("/work/shared/models/qwen3"))     # doctest: +SKIP
    >>> tok.encode("Hello wörld"), tok.decode([9707, 289, 9416])         # doctest: +SKIP
    ([9707, 289, 9416], 'Hello wörld')
"""
from __future__ import annotations

from pathlib import Path

from . import engine_version, require
from ..server.launch import LLAMA_CPP_PYTHON_VERSION, server_source
from ..server.llama_cpp_source import vocab_gguf
from ..server.tiny_model import tiny_gguf

mistralrs = require("mistralrs")

__version__ = engine_version("mistralrs")
TOKENS_KEY = "tokenizer.ggml.tokens"


def family_gguf(family: Path) -> Path:
    """The tiny GGUF of the family folder ``family`` that llama-server's rows serve (written once)."""
    return tiny_gguf(vocab_gguf(family, LLAMA_CPP_PYTHON_VERSION, server_source()))


def gguf_tokens(path: Path) -> list[str]:
    """The GGUF's ``tokenizer.ggml.tokens``, in id order."""
    gguf = require("gguf")
    field = gguf.GGUFReader(str(path)).fields[TOKENS_KEY]
    return [bytes(field.parts[index]).decode("utf-8", "replace") for index in field.data]


class Tokenizer:
    """A family's tiny GGUF loaded by mistral.rs."""

    def __init__(self, gguf: Path):
        self.runner = mistralrs.Runner(which=mistralrs.Which.GGUF(quantized_model_id=str(gguf.parent),
                                                                  quantized_filename=gguf.name),
                                       no_paged_attn=True)
        self._texts = gguf_tokens(gguf)
        self._ids = {text: i for i, text in reversed(list(enumerate(self._texts)))}  # the first id of a text
        self.vocab_size = len(self._texts)

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(family_gguf(Path(path)))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self.runner.tokenize_text(text, add_special_tokens, None))

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        ids = [int(i) for i in ids]
        for position, token in enumerate(ids):
            if not 0 <= token < self.vocab_size:
                raise ValueError(f"invalid token id {token} at position {position}: not in the GGUF's vocabulary "
                                 f"of {self.vocab_size}")
        return self.runner.detokenize_text(ids, skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._texts[token_id] if 0 <= token_id < self.vocab_size else None
