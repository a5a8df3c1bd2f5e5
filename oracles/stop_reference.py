"""Whole-text reference for stop strings, written for obviousness rather than speed.

It sees the complete text at once, so it is what every streamed run of impl.streaming.stops.StopChecker
must agree with, however the text is split into deltas.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StopOutcome:
    """The output for a text, and the stop string that ended it (None when none did): what OpenAI's
    API reports as the stop reason."""

    output: str
    stop_string: str | None

    @property
    def stopped(self) -> bool:
        return self.stop_string is not None


def stop_outcome(text: str, stops: list[str], include_stop: bool = False) -> StopOutcome:
    """``text`` cut at its first stop string, and that stop string.

    The cut is at the smallest end position where some stop ends; of the stops ending there the
    longest (earliest starting) wins, and is the one reported. Empty stops never match.

    >>> stop_outcome("xabcx", ["bc", "abc"])
    StopOutcome(output='x', stop_string='abc')
    """
    for end in range(1, len(text) + 1):
        ending_here = [stop for stop in stops if stop and text[:end].endswith(stop)]
        if ending_here:
            stop = max(ending_here, key=len)
            return StopOutcome(text[:end] if include_stop else text[: end - len(stop)], stop)
    return StopOutcome(text, None)


def apply_stops(text: str, stops: list[str], include_stop: bool = False) -> tuple[str, bool]:
    """``(output, stopped)`` for ``text`` cut at its first stop string (see ``stop_outcome``)."""
    outcome = stop_outcome(text, stops, include_stop)
    return outcome.output, outcome.stopped


def held_back_reference(text: str, stops: list[str]) -> int:
    """Length of the longest tail of ``text`` that is a proper prefix of some stop.

    That tail could still grow into a stop, so a streaming checker must not have emitted it.
    """
    longest = 0
    for length in range(len(text) + 1):
        tail = text[len(text) - length:]
        if any(len(stop) > length and stop.startswith(tail) for stop in stops):
            longest = length
    return longest
