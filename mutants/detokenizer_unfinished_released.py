"""Text is released as soon as it decodes: an unfinished character goes out as U+FFFD."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def _settled_length(self, window, text):
        return len(text)
