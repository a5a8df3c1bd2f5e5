"""The `tokenizers` (Rust) oracle: what a tokenizer.json means, according to Hugging Face.

Truncation and padding stored in the file are switched off, as impl never applies them: both
sides then answer the same question, "the ids of this whole text".
"""
from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import tokenizers
from tokenizers.decoders import DecodeStream

VERSION = f"tokenizers {version('tokenizers')}"


class TokenizersOracle:
    version = VERSION

    def __init__(self, tokenizer: tokenizers.Tokenizer):
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.special_ids = frozenset(
            token_id for token_id, token in tokenizer.get_added_tokens_decoder().items() if token.special)

    @classmethod
    def from_dir(cls, path: str | Path) -> "TokenizersOracle":
        return cls(tokenizers.Tokenizer.from_file(str(Path(path) / "tokenizer.json")))

    @classmethod
    def from_str(cls, text: str) -> "TokenizersOracle":
        return cls(tokenizers.Tokenizer.from_str(text))

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, batch: list[list[int]], skip_special_tokens: bool = False) -> list[str]:
        return self.tokenizer.decode_batch(batch, skip_special_tokens=skip_special_tokens)

    def pieces(self, ids: list[int]) -> list[str]:
        """Token strings for reports; ids the oracle does not know show as ``<id N?>``."""
        return [self.tokenizer.id_to_token(i) or f"<id {i}?>" for i in ids]

    def vocab(self) -> dict[str, int]:
        return self.tokenizer.get_vocab(with_added_tokens=True)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    def id_to_token(self, token_id: int) -> str | None:
        return self.tokenizer.id_to_token(token_id)

    def decode_stream(self, prompt_ids: list[int], chunks: list[list[int]],
                      skip_special_tokens: bool) -> Iterator[str | None]:
        """What DecodeStream, primed with the prompt, returns for each chunk of ids in turn (None
        where it holds everything back). An error it raises comes out of the iteration."""
        stream = DecodeStream(ids=prompt_ids or None, skip_special_tokens=skip_special_tokens)
        for chunk in chunks:
            yield stream.step(self.tokenizer, chunk) if chunk else ""
