"""A time limit on calls made in this process, for the commands that check one case without a
worker (``replay``, ``explain``): a hostile template that loops for hours stops at the limit.

The limit is SIGALRM's: when it passes, ``NoAnswer`` is raised in the main thread, between two
bytecodes of the Python running there (a template's loop, a parser's); a call inside native code is
stopped when it returns to Python. It is raised again each second after, so that a caller which
catches every exception (a reference recording an error as its answer) cannot swallow the limit.
Whether it fired is kept on the limit, as an answer given after it is not to be trusted either.

    >>> with time_limit(0.05) as limit:
    ...     try:
    ...         while True:
    ...             pass
    ...     except NoAnswer:
    ...         pass
    >>> limit.fired
    True
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

REPEAT_SECONDS = 1.0  # after the limit, how often NoAnswer is raised again until the call gives up


class NoAnswer(Exception):
    """A call ran past its time limit."""


@dataclass
class Limit:
    fired: bool = False


@contextmanager
def time_limit(seconds: float) -> Iterator[Limit]:
    """``seconds`` for the calls made inside; no limit outside the main thread or without SIGALRM."""
    limit = Limit()
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield limit
        return

    def expired(signum, frame):
        limit.fired = True
        raise NoAnswer(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
    try:
        yield limit
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
