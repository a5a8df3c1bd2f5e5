"""Byte-fallback runs that are not UTF-8 decode by the maximal-subpart rule (one U+FFFD per invalid
subpart, Python's errors="replace") instead of one U+FFFD per byte token."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tokenizer import decoders

from .base import restaged


class MaximalSubparts(decoders.ByteFallback):
    def decode_chain(self, tokens):
        decoded, run = [], bytearray()
        for token in tokens:
            byte = self.raw_bytes(token)
            if byte is not None:
                run += byte
                continue
            decoded += [run.decode("utf-8", "replace")] if run else []
            run.clear()
            decoded.append(token)
        return decoded + ([run.decode("utf-8", "replace")] if run else [])


Tokenizer = restaged("decoder", decoders.ByteFallback, MaximalSubparts)
