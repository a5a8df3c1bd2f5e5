"""gpt_oss: OpenAI's harmony format — messages on channels.

    <|channel|>analysis<|message|>Let me look.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>

-> reasoning "Let me look.", get_weather with ``{"city": "Paris"}`` as written. And::

    <|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>

-> reasoning "Easy.", content "Hi!".

A message is a header (``<|start|>ROLE``, ``<|channel|>NAME``, ``to=RECIPIENT``, ``<|constrain|>...``
in any order) up to ``<|message|>``, then a body up to ``<|end|>``, ``<|call|>`` or ``<|return|>``.
The analysis channel is reasoning (content with ``reasoning=False``); a message with a recipient is
a call of the recipient less its ``functions.`` prefix, its body the JSON arguments; any other
channel (final, commentary preambles) is content. Text outside messages is content; end tags
outside a message and whitespace between messages are dropped. A call body may end the stream
without ``<|call|>`` (engines strip that stop token). A header without a channel, a header still
open at the end, and a call body that is not a JSON object are content, as written. Streamed, a
call is announced once its body's JSON object begins, and its arguments follow as written (a
body that then fails to read is content, the call closed and flagged, as in engine).
"""
from __future__ import annotations

import regex

from .arguments import arguments_from_json, tool_parameters
from .engine import TaggedFormat
from .message import BlockCalls, DeltaSink, ParsedCall
from .partial import JsonCallReader
from .scanner import next_tag

_HEADER_TAGS = ("<|start|>", "<|channel|>")
_END_TAGS = ("<|end|>", "<|call|>", "<|return|>")
_CHANNEL = regex.compile(r"<\|channel\|>\s*(\w+)")
_RECIPIENT = regex.compile(r"\bto=([^\s<]+)")
_ROLE = regex.compile(r"<\|start\|>\s*(\w*)")
_ARGUMENTS_START = regex.compile(r"\s*(?=\{)")
_WHITESPACE = " \t\r\n"

OUTSIDE, HEADER, TEXT, CALL = "outside", "header", "text", "call"


class GptOss(TaggedFormat):
    name = "gpt_oss"
    reasoning_tags = None

    @classmethod
    def stream(cls, tools=None, reasoning=True, starts_in_reasoning=False):
        return HarmonyStream(tools, reasoning, starts_in_reasoning)


class HarmonyStream:
    """The state machine for harmony messages (the tagged core's shape does not fit channels)."""

    def __init__(self, tools=None, reasoning=True, starts_in_reasoning=False):
        self.parameters = tool_parameters(tools)
        self.reasoning = reasoning
        self.sink = DeltaSink()
        self.block_calls = BlockCalls(self.sink, self.parameters)
        self.buffer = ""
        self.header = ""
        self.pending = ""  # whitespace between messages, dropped unless text follows
        self.at_boundary = True
        self.mode, self.emit = OUTSIDE, self.sink.content
        if starts_in_reasoning and reasoning:  # the prompt ended inside an analysis message
            self.mode, self.emit = TEXT, self.sink.reasoning
        self.finished = False

    def feed(self, text: str, final: bool = False) -> list[dict]:
        if self.finished:
            raise RuntimeError("feed() after the stream was finished with final=True")
        self.buffer += text
        step = {OUTSIDE: self._outside, HEADER: self._header, TEXT: self._text, CALL: self._call}
        while step[self.mode](final):
            pass
        self.finished = final
        return self.sink.take()

    def _outside(self, final: bool) -> bool:
        if self.at_boundary:
            rest = self.buffer.lstrip(_WHITESPACE)
            self.pending += self.buffer[:len(self.buffer) - len(rest)]
            self.buffer = rest
        text, tag, self.buffer = next_tag(self.buffer, _HEADER_TAGS + _END_TAGS, final)
        if text:
            self.sink.content(self.pending + text)
            self.pending, self.at_boundary = "", False
        if tag is None:
            return False
        self.pending, self.at_boundary = "", True
        if tag in _HEADER_TAGS:
            self.mode, self.header = HEADER, tag
        return True

    def _header(self, final: bool) -> bool:
        header, tag, self.buffer = next_tag(self.buffer, ("<|message|>",), final)
        self.header += header
        if tag is None:
            if final:
                self.sink.content(self.header)
            return False
        channel, recipient, role = _CHANNEL.search(self.header), _RECIPIENT.search(self.header), _ROLE.search(self.header)
        if channel is None or (role is not None and role[1] not in ("", "assistant")):
            self.sink.content(self.header + tag)
            self.mode, self.at_boundary = OUTSIDE, False
        elif recipient is not None:
            self.mode, self.header = CALL, self.header + tag
            self.name = recipient[1].removeprefix("functions.")
            self.reader = JsonCallReader(_ARGUMENTS_START, lambda start: (self.name, None) if self.name else None)
        else:
            self.mode = TEXT
            self.emit = self.sink.reasoning if channel[1] == "analysis" and self.reasoning else self.sink.content
        return True

    def _text(self, final: bool) -> bool:
        text, tag, self.buffer = next_tag(self.buffer, _END_TAGS + _HEADER_TAGS, final)
        self.emit(text)
        if tag is None:
            return False
        self.mode, self.at_boundary = OUTSIDE, True
        if tag in _HEADER_TAGS:
            self.mode, self.header = HEADER, tag
        return True

    def _call(self, final: bool) -> bool:
        body, tag, rest = next_tag(self.buffer, _END_TAGS, final)
        self.block_calls.update(self.reader.read(self.buffer, len(body)))
        if tag is None and not final:
            return False
        self.buffer = rest
        arguments = arguments_from_json(body.strip() or None)
        calls = [ParsedCall(self.name, arguments)] if arguments is not None and self.name else None
        self.mode, self.at_boundary = OUTSIDE, True
        if not self.block_calls.finish(calls):
            self.sink.content(self.header + body + (tag or ""))
            self.at_boundary = False
        return True
