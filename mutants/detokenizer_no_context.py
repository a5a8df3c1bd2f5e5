"""Each new window of ids is decoded without the ids before it, so the SentencePiece leading-space
strip applies to every delta."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def _context(self, window):
        return []
