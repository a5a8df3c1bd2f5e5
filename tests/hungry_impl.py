"""A deliberately memory-hungry implementation: its tokenizer allocates without end on any text with
a digit. Run it only under ``--max-memory``: the limit turns it into an "out of memory" record.
The blocks are never written, so they cost address space, not the machine's memory."""
from textbound.impl import *  # noqa: F403 - every other public name is impl's own
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "hungry-1"
BLOCK = 64 * 2 ** 20


class Tokenizer(_Tokenizer):
    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        hoard = []
        while any(c.isdigit() for c in text):
            hoard.append(bytes(BLOCK))  # calloc: pages never touched
        return super().encode(text, add_special_tokens)
