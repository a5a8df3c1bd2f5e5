"""A deliberately hanging implementation: its tokenizer spins for ever on any text with a digit,
as a native engine stuck in a loop would (no exception, no answer). Everything else is impl's."""
from impl import *  # noqa: F403 - every other public name is impl's own
from impl import Tokenizer as _Tokenizer

__version__ = "hanging-1"


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        while any(c.isdigit() for c in text):
            pass
        return super().encode(text, add_special_tokens)
