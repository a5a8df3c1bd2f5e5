"""A detokenizer that keeps each delta's last character back until the next add or the flush (a
server holding back one character in case a stop string begins there, also when no stop string is
set): the text comes out whole, late. ``add`` of "Hello" shows "Hell", the next add shows the "o"."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kept = ""

    def add(self, ids):
        shown = self.kept + super().add(ids)
        self.kept = shown[-1:]
        return shown[:-1]

    def flush(self):
        shown, self.kept = self.kept + super().flush(), ""
        return shown
