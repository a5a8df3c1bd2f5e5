"""What ``textbound check`` prints while it runs: a bar on a terminal, a few plain lines in CI.

In CI (the ``CI`` variable set, or stderr not a terminal) it prints one line when a family ×
component finishes and a heartbeat when the log has been quiet for 30 s, or for a tenth of the time
run so far once that is longer: a default run of 15 families × 6 components logs about 120 lines
instead of one per chunk, and even a ten-hour run stays under 200:

    [  41.2 s] gpt2 tokenizer: 5,931 cases, 0 divergences
    [  70.0 s] ... 48,120 cases checked, 0 divergences; checking qwen3 detokenizer
"""
from __future__ import annotations

import os
import sys
import time
from typing import TextIO

HEARTBEAT_SECONDS = 30.0  # the shortest quiet time before a heartbeat
HEARTBEAT_FRACTION = 0.1  # of the time run so far: heartbeats thin out as a long run goes on


def plain_logs(stream: TextIO) -> bool:
    """True in CI or when the output is not a terminal: plain lines instead of a progress bar."""
    return bool(os.environ.get("CI")) or not stream.isatty()


class Progress:
    def __init__(self, stream: TextIO = sys.stderr):
        self.stream = stream
        self.started = time.monotonic()
        self.last_line = self.started
        self.cases = 0
        self.divergences = 0
        self.current = ""
        self.bar = None
        if not plain_logs(stream):
            from rich.progress import Progress as RichProgress
            # No refresh thread: the runner forks workers, and a thread holding a lock at a fork
            # would leave that lock held forever in the child. tick() refreshes instead.
            self.bar = RichProgress(transient=True, auto_refresh=False)
            self.bar.start()
            self.bar_task = self.bar.add_task("checking", total=None)

    def _line(self, text: str) -> None:
        self.last_line = time.monotonic()
        print(f"[{self.last_line - self.started:7.1f} s] {text}", file=self.stream, flush=True)

    def checked(self, family: str, component: str, cases: int, divergences: int) -> None:
        """Some cases of ``family``/``component`` were checked."""
        self.cases += cases
        self.divergences += divergences
        self.current = f"{family} {component}"
        self.tick()

    def finished(self, family: str, component: str, cases: int, divergences: int, note: str = "") -> None:
        """Every case of ``family``/``component`` was checked."""
        self.note(f"{family} {component}: {cases:,} cases, {divergences:,} divergences" + (f"; {note}" if note else ""))

    def note(self, text: str) -> None:
        """A line of its own about the run (what it does once the cases are checked)."""
        if self.bar is not None:
            self.bar.console.print(text)
        else:
            self._line(text)

    def tick(self) -> None:
        """Called often: refreshes the bar, or prints a heartbeat when the log has been quiet."""
        status = f"{self.cases:,} cases checked, {self.divergences:,} divergences"
        if self.bar is not None:
            self.bar.update(self.bar_task, description=f"{self.current}: {status}")
            self.bar.refresh()
        elif (now := time.monotonic()) - self.last_line >= max(HEARTBEAT_SECONDS, HEARTBEAT_FRACTION * (now - self.started)):
            self._line(f"... {status}; checking {self.current}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
