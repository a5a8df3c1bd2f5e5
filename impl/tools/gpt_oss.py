"""gpt_oss: OpenAI's harmony format — messages on channels.

    <|channel|>analysis<|message|>Let me look.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>

-> reasoning "Let me look.", get_weather with ``{"city": "Paris"}`` as written. And::

    <|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>

-> reasoning "Easy.", content "Hi!".

A message is a header from ``<|start|>`` or ``<|channel|>`` to ``<|message|>`` (``<|start|>ROLE``,
then text, ``<|channel|>NAME``, text, an optional ``<|constrain|>...``: no other tag), then a body up
to the first end tag (``<|end|>``, ``<|call|>`` or ``<|return|>``; special tokens, so inside a JSON
string too) or the end of the output (engines strip the stop token). The analysis channel is
reasoning; with ``reasoning=False`` an analysis message is content as written, header and end tag
included (llama.cpp's tests, reasoning format none: its tags are the reasoning's, as ``<think>``
stays in content elsewhere). A message with a recipient ``to=functions.NAME`` (in the header's text,
on any channel) is a call whose body is its JSON arguments object; any other channel (final,
commentary preambles) is content. Text outside messages is content, verbatim (stray end tags and
whitespace between messages too), except after ``<|call|>`` or ``<|return|>``: they are stop tokens,
the turn ends there, so text after one up to the next message is dropped (vLLM and SGLang read
content from messages only, llama.cpp drops what follows the last message: SGLang's
test_gpt_oss_detector.py, fast path; llama.cpp's common/chat.cpp, common_chat_parse_gpt_oss). A
header that is not one (as soon as its text cannot become one) leaves its opening tag as content, and
reading goes on right after it. A call body that is not a JSON object, or a message to any other
recipient, is content, as written. The first header may go on from the prompt's
``<|start|>assistant``: an output that begins (after spaces) with ``to=`` begins inside it, the
recipient before the channel (llama.cpp's tests/test-chat.cpp, GPT-OSS; harmony's own parser reads a
recipient in the role header)::

     to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}

-> get_weather with ``{"city": "Paris"}``.
Streamed, a call is announced once its body's JSON object begins, and its arguments follow as
written (a body that then fails to read is content, the call closed and flagged, as in engine).
"""
from __future__ import annotations

import regex

from .arguments import object_arguments, text_name, tool_parameters
from .engine import TaggedFormat
from .message import BlockCalls, DeltaSink, ParsedCall
from .partial import JsonCallReader
from .scanner import held_length, next_tag

_HEADER_TAGS = ("<|start|>", "<|channel|>")
_STOP_TAGS = ("<|call|>", "<|return|>")
_END_TAGS = ("<|end|>", *_STOP_TAGS)
_MESSAGE = "<|message|>"
_HEADER = regex.compile(r"(?:<\|start\|>)?(?:assistant)?(?P<before>[^<]*)<\|channel\|>(?P<channel>[^\s<]+)"
                        r"(?P<after>[^<]*)(?:<\|constrain\|>[^<]*)?")
_RECIPIENT = regex.compile(r"\bto=([^\s<]+)")
_FUNCTIONS = "functions."
_ARGUMENTS_START = regex.compile(r"[ \t\r\n]*(?=\{)")
_ROLE_RECIPIENT = regex.compile(r"[ \t]*to=")  # an output that begins inside the role header's recipient

ROLE, OUTSIDE, HEADER, TEXT, CALL, TURN_OVER = "role", "outside", "header", "text", "call", "turn over"


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
        self.header = ""  # the open message's header, its opening tag first
        self.mode, self.emit = ROLE, self.sink.content
        self.verbatim = False  # whether the open message's end tag is content (analysis with reasoning off)
        if starts_in_reasoning:  # the prompt ended inside an analysis message
            self.mode, self.emit = TEXT, self.sink.reasoning if reasoning else self.sink.content
            self.verbatim = not reasoning
        self.finished = False

    def feed(self, text: str, final: bool = False) -> list[dict]:
        if self.finished:
            raise RuntimeError("feed() after the stream was finished with final=True")
        self.buffer += text
        step = {ROLE: self._role, OUTSIDE: self._outside, HEADER: self._header, TEXT: self._text, CALL: self._call,
                TURN_OVER: self._turn_over}
        while step[self.mode](final):
            pass
        self.finished = final
        return self.sink.take()

    def _role(self, final: bool) -> bool:
        """The output's start: inside the role header when it begins with a recipient (``to=``)."""
        match = _ROLE_RECIPIENT.match(self.buffer, partial=True)
        if match is not None and match.partial and not final:
            return False
        self.mode = HEADER if match is not None and not match.partial else OUTSIDE
        return True

    def _outside(self, final: bool, kept: bool = True) -> bool:
        text, tag, self.buffer = next_tag(self.buffer, _HEADER_TAGS, final)
        if kept:
            self.sink.content(text)
        if tag is None:
            return False
        self.mode, self.header = HEADER, tag
        return True

    def _turn_over(self, final: bool) -> bool:
        """After a stop token: text up to the next message is dropped."""
        return self._outside(final, kept=False)

    def _header(self, final: bool) -> bool:
        position = self.buffer.find(_MESSAGE)
        header = self.header + (self.buffer if position < 0 else self.buffer[:position])
        if position < 0:
            so_far = header[:len(header) - held_length(header, (_MESSAGE,))]
            if not final and _HEADER.fullmatch(so_far, partial=True) is not None:
                return False  # it may still become a header
        match = _HEADER.fullmatch(header) if position >= 0 else None
        if match is None:  # not a header: its opening tag is text, and what follows is read again
            self.sink.content(self.header)
            self.mode = OUTSIDE
            return True
        self.header, self.buffer = header + _MESSAGE, self.buffer[position + len(_MESSAGE):]
        recipient = _RECIPIENT.search(match["before"] + " " + match["after"])
        if recipient is None:
            analysis = match["channel"] == "analysis"
            self.mode, self.emit = TEXT, self.sink.reasoning if analysis and self.reasoning else self.sink.content
            self.verbatim = analysis and not self.reasoning
            if self.verbatim:
                self.sink.content(self.header)
            return True
        name = recipient[1][len(_FUNCTIONS):] if recipient[1].startswith(_FUNCTIONS) else None
        self.name = name and text_name(name)
        self.mode = CALL
        self.reader = JsonCallReader(_ARGUMENTS_START, lambda match: (self.name, None) if self.name else None)
        return True

    def _text(self, final: bool) -> bool:
        text, tag, self.buffer = next_tag(self.buffer, _END_TAGS, final)
        self.emit(text + (tag or "") if self.verbatim else text)
        if tag is None:
            return False
        self.mode, self.verbatim = TURN_OVER if tag in _STOP_TAGS else OUTSIDE, False
        return True

    def _call(self, final: bool) -> bool:
        body, tag, rest = next_tag(self.buffer, _END_TAGS, final)
        self.block_calls.update(self.reader.read(body, len(body)))
        if tag is None and not final:
            return False
        self.buffer = rest
        arguments = object_arguments(body) if self.name else None
        self.mode = TURN_OVER if tag in _STOP_TAGS else OUTSIDE
        if not self.block_calls.finish(None if arguments is None else [ParsedCall(self.name, arguments)]):
            self.sink.content(self.header + body + (tag or ""))
        return True
