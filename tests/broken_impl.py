"""A deliberately broken implementation, to show that ``--impl`` catches what it should.

Its tokenizer drops every token that follows a digit, which only shows on text with digits; its
stop checker is missing altogether, so that component is reported as not provided.
"""
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "broken-1"


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids = super().encode(text, add_special_tokens)
        if any(c.isdigit() for c in text) and len(ids) > 1:
            return ids[:-1]
        return ids
