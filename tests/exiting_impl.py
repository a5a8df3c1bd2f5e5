"""A deliberately exiting implementation: its tokenizer raises BaseExceptions that are no Exception
on any text with a digit, as a Rust engine's panic does (pyo3's PanicException) and as a library
calling sys.exit() would: with a 9, a panic-like one; with another digit, SystemExit. Everything
else is impl's."""
from textbound.impl import *  # noqa: F403 - every other public name is impl's own
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "exiting-1"


class PanicException(BaseException):
    """As pyo3 raises a Rust panic: a BaseException, so ``except Exception`` lets it through."""


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if "9" in text:
            raise PanicException("index out of bounds: the len is 3 but the index is 7")
        if any(c.isdigit() for c in text):
            raise SystemExit(3)
        return super().encode(text, add_special_tokens)
