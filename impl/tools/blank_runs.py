"""Whitespace alone beside a call is not content: the layout between calls, before the first (after
the reasoning, at the start) and after the last is dropped, as vLLM and llama.cpp drop it (vLLM's
parsers keep only the text before the first call and after the last; llama.cpp's tests expect
``"I'm\\nthinking</think>\\n<tool_call>...`` to have content "").

A run is the content between two boundaries: the start or end of the output, a reasoning block, a
call. A run of whitespace alone (space, tab, line feed, carriage return) that touches a call on
either side is dropped; any other run is content, verbatim. A stream holds a run while it is
whitespace alone and its fate is open, and releases it as soon as something else is written in it.

A format may trim more (``edge``, its ``edge_whitespace``): the characters of ``edge`` at an end of a
run that touches a call or a reasoning block are dropped too, where both servers trim there (glm45:
vLLM's glm4_moe parser strips its content, llama.cpp trims it around reasoning and calls; where only
one does, as llama.cpp for kimi_k2 and minimax_m2, transformers and the other keep it, and so does
impl). A stream then also holds a run's trailing ``edge`` characters until what follows is known.

>>> from textbound.impl.tools.message import DeltaSink
>>> sink = DeltaSink(); runs = BlankRuns(sink)
>>> runs.content("\\n"); runs.end_run(by_call=True); runs.start_run(after_call=True); runs.content(" Hi")
>>> sink.take()
[{'content': ' Hi'}]
>>> runs = BlankRuns(sink, edge=" \\n"); runs.start_run(after_call=False)   # after reasoning
>>> runs.content("\\nHi\\n"); runs.end_run(by_call=True); sink.take()
[{'content': 'Hi'}]
"""
from __future__ import annotations

from .json_prefix import JSON_WHITESPACE
from .message import DeltaSink


class BlankRuns:
    """Passes content on to a DeltaSink, holding each run while it is whitespace alone (and, with an
    ``edge``, the run's trailing edge characters)."""

    def __init__(self, sink: DeltaSink, edge: str = ""):
        self.sink = sink
        self.edge = edge        # characters dropped at a run's ends that touch a call or reasoning
        self.held = ""          # the run so far, while it is whitespace alone
        self.tail = ""          # the run's trailing edge characters, after other text
        self.blank = True       # whether the run so far is whitespace alone
        self.after_call = False  # whether the run began right after a call
        self.after_block = False  # whether the run began right after a call or a reasoning block

    def content(self, text: str) -> None:
        if self.blank:
            if not text.lstrip(JSON_WHITESPACE):
                self.held += text
                return
            text, self.held, self.blank = self.held + text, "", False
            if self.after_block:
                text = text.lstrip(self.edge)
        if self.edge:
            stem = text.rstrip(self.edge)
            if not stem:
                self.tail += text
                return
            text, self.tail = self.tail + stem, text[len(stem):]
        self.sink.content(text)

    def end_run(self, by_call: bool, by_reasoning: bool = False) -> None:
        """The run ends: at a call (``by_call``), a reasoning block (``by_reasoning``) or the end of the output."""
        if self.blank:
            kept = "" if by_call or self.after_call else self.held
            if self.after_block:
                kept = kept.lstrip(self.edge)
            if by_reasoning:
                kept = kept.rstrip(self.edge)
        else:
            kept = "" if by_call or by_reasoning else self.tail
        if kept:
            self.sink.content(kept)
        self.held = self.tail = ""

    def start_run(self, after_call: bool) -> None:
        """A run begins: after a call, or after a reasoning block."""
        self.blank, self.after_call, self.after_block = True, after_call, True
