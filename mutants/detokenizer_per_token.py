"""Each id is decoded alone and the pieces joined: a character split across byte-level tokens
becomes U+FFFDs, and SentencePiece tokens lose their leading spaces."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def _decode(self, ids):
        return "".join(super(IncrementalDetokenizer, self)._decode([token_id]) for token_id in ids)
