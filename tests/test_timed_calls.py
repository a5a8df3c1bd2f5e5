"""CallClock: the seconds inside impl's and the oracle's calls, counted once however deeply they
nest, including what a generator yields and what objects made by a class answer."""
from __future__ import annotations

import time

from textbound.run.timed_calls import CallClock


def busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class Parser:
    def __init__(self, owner=None):
        self.owner = owner

    def feed(self, text: str) -> list[str]:
        busy(0.01)
        return self.split(text)

    def split(self, text: str) -> list[str]:
        busy(0.01)
        return text.split()

    def pieces(self, text: str):
        for piece in text.split():
            busy(0.01)
            yield piece


def test_calls_through_wrapped_objects_are_timed_once_and_the_rest_is_not():
    clock, started = CallClock(), time.process_time()
    parser = clock.wrap(Parser)(owner=clock.wrap(Parser()))  # a class's instance is wrapped, its arguments not
    assert type(parser.owner) is Parser
    assert parser.feed("a b") == ["a", "b"]  # feed's own split counted with it, not again
    assert list(parser.pieces("x y z")) == ["x", "y", "z"]
    busy(0.05)  # outside any call: the harness's time
    spent = time.process_time() - started
    # the constructor, feed, pieces, and four steps of its generator (the last one ends it)
    assert clock.calls == 7
    # CPU seconds, so a loaded machine changes neither side: 0.05 burnt inside the calls, 0.05 outside
    assert 0.05 <= clock.seconds <= spent - 0.05, (clock.seconds, spent)
    # less the clock's own cost, microseconds a call: never more than what it measured
    assert 0.04 <= clock.inside_seconds() <= clock.seconds
