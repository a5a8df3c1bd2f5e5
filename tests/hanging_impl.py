"""A deliberately hanging implementation: its tokenizer spins for ever on any text with a digit,
as a native engine stuck in a loop would (no exception, no answer). Everything else is impl's.

With HANGS_ONLY_AFTER_ANOTHER_TEXT set in the environment it hangs only when an earlier text went
through the same process, as an engine left in a bad state by a previous request would: checked
alone, such a case passes.
"""
import os

from textbound.impl import *  # noqa: F403 - every other public name is impl's own
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "hanging-1"
ONLY_AFTER_ANOTHER = "HANGS_ONLY_AFTER_ANOTHER_TEXT"
texts_seen = 0


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        global texts_seen
        texts_seen += 1
        hangs = any(c.isdigit() for c in text) and (texts_seen > 1 or not os.environ.get(ONLY_AFTER_ANOTHER))
        while hangs:
            pass
        return super().encode(text, add_special_tokens)
