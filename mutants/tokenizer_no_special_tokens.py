"""add_special_tokens is ignored: BOS/CLS and friends are never added."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class Tokenizer(impl.Tokenizer):
    def encode(self, text, add_special_tokens=False):
        return super().encode(text, add_special_tokens=False)
