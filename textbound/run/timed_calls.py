"""The time a check spends inside impl's and the oracle's calls, measured where the check makes them.

A check of stops, chat, tools or structured interleaves impl's steps with the oracle's (a stop
checker fed delta by delta against the reference's hold-back, a Constraint's mask against
llguidance's after every token), so its calls cannot be replayed in a loop apart from it. Instead
``CallClock`` wraps the objects and names a check calls and adds up the seconds spent inside them;
a call made from inside another (impl's parser calling its own tokenizer) is counted once, with
the outer one. What is left of a case's time is the harness's: generating inputs inside the check
(Hypothesis, the structured samplers), comparing, recording.

Reading the clock costs time inside each call too; ``inside_seconds`` subtracts what it measures
for a call that does nothing, so that thousands of microsecond calls (a stop checker's ``add``)
are not counted as longer than they are.

    >>> clock = CallClock()
    >>> timed_len = clock.wrap(len)
    >>> timed_len("abc"), clock.calls
    (3, 1)
"""
from __future__ import annotations

import functools
import inspect
import time
import types
from collections.abc import Callable, Iterator


class CallClock:
    """Seconds spent inside the callables it wraps, and how many outermost calls were made."""

    def __init__(self):
        self.seconds, self.calls, self._depth = 0.0, 0, 0

    def inside_seconds(self) -> float:
        """The seconds inside the calls, less the clock's own cost in each (never below zero)."""
        return max(0.0, self.seconds - self.calls * _clock_cost_per_call())

    def wrap(self, target):
        """``target`` (a callable, an object, a class or a module) with every call through it timed."""
        return _Timed(target, self)

    def call(self, fn: Callable, args: tuple, kwargs: dict):
        if self._depth:
            return fn(*args, **kwargs)
        args = tuple(map(_unwrapped, args))  # impl and the oracle get their own objects, never a wrapper
        kwargs = {name: _unwrapped(value) for name, value in kwargs.items()}
        self._depth, started = 1, time.process_time()
        try:
            result = fn(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - started
            self.calls += 1
            self._depth = 0
        if isinstance(result, types.GeneratorType):
            return self._timed_iteration(result)
        # An object a class or a class's factory (from_dir, of) makes is what later calls go to.
        return self.wrap(result) if _makes_objects(fn) else result

    def _timed_iteration(self, items: Iterator) -> Iterator:
        while True:
            try:
                yield self.call(next, (items,), {})
            except StopIteration:
                return


@functools.cache
def _clock_cost_per_call(calls: int = 20000) -> float:
    """What one call of a function that does nothing adds to a CallClock's seconds (the least of
    three tries: the machine is shared)."""
    def once() -> float:
        clock = CallClock()
        nothing = clock.wrap(lambda: None)
        for _ in range(calls):
            nothing()
        return clock.seconds / calls
    return min(once() for _ in range(3))


def _makes_objects(fn: Callable) -> bool:
    return isinstance(fn, type) or (inspect.ismethod(fn) and isinstance(fn.__self__, type))


def _unwrapped(value):
    return object.__getattribute__(value, "target") if isinstance(value, _Timed) else value


class _Timed:
    """A stand-in for ``target``: its callable attributes and calls go through the clock."""

    def __init__(self, target, clock: CallClock):
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "clock", clock)

    def __getattr__(self, name: str):
        value = getattr(object.__getattribute__(self, "target"), name)
        if not callable(value):
            return value
        clock = object.__getattribute__(self, "clock")
        if isinstance(value, type):
            return clock.wrap(value)
        return lambda *args, **kwargs: clock.call(value, args, kwargs)

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "clock").call(object.__getattribute__(self, "target"), args, kwargs)
