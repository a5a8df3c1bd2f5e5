"""A Lowercase normalizer that lowercases ASCII letters only (C's tolower per byte)."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names
from textbound.impl.tokenizer import normalizers
from textbound.mutants.base import restaged


class _AsciiLowercase(normalizers.Lowercase):
    def normalize(self, text: str) -> str:
        return "".join(c.lower() if c.isascii() else c for c in text)


Tokenizer = restaged("normalizer", normalizers.Lowercase, _AsciiLowercase)
