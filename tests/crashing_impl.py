"""A deliberately crashing implementation: its tokenizer reads address 0 on any text with a digit,
so the process dies of SIGSEGV as a native engine with a bad pointer would. Everything else is impl's."""
import ctypes

from textbound.impl import *  # noqa: F403 - every other public name is impl's own
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "crashing-1"


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if any(c.isdigit() for c in text):
            ctypes.string_at(0)
        return super().encode(text, add_special_tokens)
