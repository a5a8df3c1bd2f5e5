"""An encode that normalizes line endings first ("\r\n" and "\r" read as "\n"), as a front end
reading the prompt in text mode with universal newlines does: the ids of "\r\n" are the ids of "\n"."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class Tokenizer(impl.Tokenizer):
    def encode(self, text, add_special_tokens=True):
        return super().encode(text.replace("\r\n", "\n").replace("\r", "\n"), add_special_tokens)
