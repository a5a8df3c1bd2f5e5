"""Stop strings for streamed generation text.

Text arrives in deltas of any size. Generation stops at the earliest position where any stop
string is complete; among the stops completed there, the one that starts earliest (the longest)
wins. Output is everything before that stop (through its end with ``include_stop``).

A checker may not emit text that a later delta could turn into the start of a stop, so it holds
back the longest tail of the text so far that is a proper prefix of some stop, and nothing more.
An Aho-Corasick automaton over the stops tracks exactly that tail, so each ``add`` costs time
proportional to the delta plus the longest stop, however long the stream has been.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable

ROOT = 0


class StopAutomaton:
    """Aho-Corasick automaton whose states are the distinct prefixes of the stop strings.

    After feeding text one character at a time, the state is the longest suffix of that text
    which is a prefix of some stop; ``depth`` is its length and ``match_length`` the length of the
    longest stop ending there (0 when none does).
    """

    def __init__(self, stops: Iterable[str]):
        self._children: list[dict[str, int]] = [{}]
        self._fallback: list[int] = [ROOT]  # state of the longest proper suffix that is a prefix too
        self.depth: list[int] = [0]
        self.match_length: list[int] = [0]
        for stop in stops:
            self._insert(stop)
        self._link_fallbacks()

    def step(self, state: int, char: str) -> int:
        """The state after reading ``char`` in ``state``."""
        while char not in self._children[state] and state != ROOT:
            state = self._fallback[state]
        return self._children[state].get(char, ROOT)

    def _insert(self, stop: str) -> None:
        state = ROOT
        for char in stop:
            if char not in self._children[state]:
                self._children.append({})
                self._fallback.append(ROOT)
                self.depth.append(self.depth[state] + 1)
                self.match_length.append(0)
                self._children[state][char] = len(self._children) - 1
            state = self._children[state][char]
        self.match_length[state] = len(stop)

    def _link_fallbacks(self) -> None:
        # Breadth first, so a state's fallback (always shallower) is complete before the state.
        pending = deque(self._children[ROOT].values())
        while pending:
            state = pending.popleft()
            for char, child in self._children[state].items():
                if state != ROOT:
                    self._fallback[child] = self.step(self._fallback[state], char)
                # A stop that is the state's own text is longer than any stop ending in its suffix.
                if not self.match_length[child]:
                    self.match_length[child] = self.match_length[self._fallback[child]]
                pending.append(child)


class StopChecker:
    """Streams text through, cutting it at the first stop string and holding back minimal text.

    >>> checker = StopChecker(["</s>"])
    >>> checker.add("Hello</"), checker.add("s> more"), checker.stopped, checker.stop_string
    ('Hello', '', True, '</s>')
    """

    def __init__(self, stops: Iterable[str], include_stop: bool = False):
        if not isinstance(include_stop, bool):
            raise TypeError(f"include_stop must be bool, found {type(include_stop).__name__}")
        self._automaton = StopAutomaton(stop for stop in _checked_stops(stops) if stop)
        self._include_stop = include_stop
        self._state = ROOT
        self._held = ""  # the text of self._state: the tail that may yet begin a stop
        self._stop_string: str | None = None
        self._finished = False

    @property
    def stopped(self) -> bool:
        """Whether a stop string has completed."""
        return self._stop_string is not None

    @property
    def stop_string(self) -> str | None:
        """The stop string that ended generation, or None while it goes on."""
        return self._stop_string

    def add(self, delta: str) -> str:
        """The text that ``delta`` releases: all that can no longer be part of a stop."""
        if not isinstance(delta, str):
            raise TypeError(f"add() takes str, found {type(delta).__name__}")
        if self.stopped:
            return ""
        if self._finished:
            raise RuntimeError("add() after finish()")
        text = self._held + delta
        state = self._state
        for offset, char in enumerate(delta, start=len(self._held)):
            state = self._automaton.step(state, char)
            stop_length = self._automaton.match_length[state]
            if stop_length:
                end = offset + 1
                self._stop_string = text[end - stop_length:end]
                self._held = ""
                return text[:end] if self._include_stop else text[:end - stop_length]
        self._state = state
        released = len(text) - self._automaton.depth[state]
        self._held = text[released:]
        return text[:released]

    def finish(self) -> str:
        """The held-back tail, released because the stream has ended without a stop."""
        self._finished = True
        tail, self._held = self._held, ""
        return tail


def _checked_stops(stops: Iterable[str]) -> list[str]:
    # A lone str would otherwise be taken as one stop per character.
    if isinstance(stops, (str, bytes)):
        raise TypeError(f"stops must be a collection of str, not a single {type(stops).__name__}: {stops!r}")
    try:
        stops = list(stops)
    except TypeError:
        raise TypeError(f"stops must be a collection of str, found {type(stops).__name__}") from None
    for index, stop in enumerate(stops):
        if not isinstance(stop, str):
            raise TypeError(f"stops[{index}] must be str, found {type(stop).__name__}: {stop!r}")
    return stops
