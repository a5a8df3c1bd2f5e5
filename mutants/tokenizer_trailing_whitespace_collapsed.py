"""Decoded text's trailing whitespace run is collapsed to its first character ("a\\n\\n" -> "a\\n")."""
import regex

from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

TRAILING_WHITESPACE = regex.compile(r"(\s)\s+\Z")


class Tokenizer(impl.Tokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return TRAILING_WHITESPACE.sub(r"\1", super().decode(ids, skip_special_tokens))
