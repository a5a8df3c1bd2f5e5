"""A detokenizer whose deltas are stripped of leading whitespace (a server trimming each chunk
before it is sent)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def add(self, ids):
        return super().add(ids).lstrip(" ")
