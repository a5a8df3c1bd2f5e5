"""Whitespace alone beside a call is not content: the layout between calls, before the first (after
the reasoning, at the start) and after the last is dropped, as vLLM and llama.cpp drop it (vLLM's
parsers keep only the text before the first call and after the last; llama.cpp's tests expect
``"I'm\\nthinking</think>\\n<tool_call>...`` to have content "").

A run is the content between two boundaries: the start or end of the output, a reasoning block, a
call. A run of whitespace alone (space, tab, line feed, carriage return) that touches a call on
either side is dropped; any other run is content, verbatim. A stream holds a run while it is
whitespace alone and its fate is open, and releases it as soon as something else is written in it.

>>> from textbound.impl.tools.message import DeltaSink
>>> sink = DeltaSink(); runs = BlankRuns(sink)
>>> runs.content("\\n"); runs.end_run(by_call=True); runs.start_run(after_call=True); runs.content(" Hi")
>>> sink.take()
[{'content': ' Hi'}]
"""
from __future__ import annotations

from .json_prefix import JSON_WHITESPACE
from .message import DeltaSink


class BlankRuns:
    """Passes content on to a DeltaSink, holding each run while it is whitespace alone."""

    def __init__(self, sink: DeltaSink):
        self.sink = sink
        self.held = ""          # the run so far, while it is whitespace alone
        self.blank = True       # whether the run so far is whitespace alone
        self.after_call = False  # whether the run began right after a call

    def content(self, text: str) -> None:
        if self.blank:
            if not text.lstrip(JSON_WHITESPACE):
                self.held += text
                return
            text, self.held, self.blank = self.held + text, "", False
        self.sink.content(text)

    def end_run(self, by_call: bool) -> None:
        """The run ends: at a call (``by_call``), a reasoning block or the end of the output."""
        if self.held and not (by_call or self.after_call):
            self.sink.content(self.held)
        self.held = ""

    def start_run(self, after_call: bool) -> None:
        """A run begins: after a call, or after a reasoning block."""
        self.blank, self.after_call = True, after_call
