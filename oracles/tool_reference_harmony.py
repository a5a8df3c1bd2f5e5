"""Whole-text reference of gpt-oss's harmony format (``gpt_oss``), learnt from OpenAI's harmony
documentation: the output is a sequence of messages, each a header (``<|start|>assistant``, which the
prompt already wrote for the first one, then ``<|channel|>CHANNEL``, a recipient ``to=functions.NAME``
before or after the channel, an optional ``<|constrain|>json``), ``<|message|>``, a body, and an end
token (``<|end|>``, ``<|call|>`` or ``<|return|>``; the end of the text ends the last one too).

- channel ``analysis`` is reasoning; when reasoning is off, the whole message is content as written
  (header and end token too: llama.cpp's tests with reasoning format none keep it so; the header
  counts as fallback, as a stream holds it until ``<|message|>`` says it is no call); ``final`` and
  ``commentary`` without a recipient (a preamble) are content;
- a message to ``functions.NAME``, on any channel, is a call whose body is the JSON arguments object;
  to any other recipient, or malformed, it is kept whole as content, as is text outside messages
  (stray end tokens and whitespace between messages included), except after a stop token;
- ``<|call|>`` and ``<|return|>`` are stop tokens: the turn ends there (an engine stops generating), so
  text after one up to the next message is not the message's and is dropped (vLLM and SGLang read
  content from messages only, llama.cpp drops what follows the last message: SGLang's
  test_gpt_oss_detector.py, fast path; llama.cpp's common/chat.cpp, common_chat_parse_gpt_oss);
- a header with anything but the channel, a recipient and ``<|constrain|>`` in it is not one: its first
  tag is content and reading goes on after it;
- the first end token ends any message (they are special tokens, so inside a JSON string too);
- the first message's header may go on from the prompt's ``<|start|>assistant``: an output that
  begins (after spaces) with ``to=`` begins inside that header, the recipient written before the channel
  (llama.cpp's tests/test-chat.cpp, GPT-OSS; harmony's own parser reads a recipient in the role header).

    >>> parse_harmony('<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>commentary '
    ...               'to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>').message()
    {'content': '', 'reasoning_content': 'hm', 'calls': [{'name': 'f', 'arguments': {'a': 1}}]}
"""
from __future__ import annotations

import regex

from .tool_reference_core import CONTENT, FALLBACK, MARKUP, REASONING, Parsed, json_object_call

START, CHANNEL, MESSAGE, CONSTRAIN = "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"
STOPS = ("<|call|>", "<|return|>")
ENDS = ("<|end|>", *STOPS)
HARMONY_TAGS = (START, CHANNEL, MESSAGE, CONSTRAIN, *ENDS)
HEADER = regex.compile(r"\A(?:<\|start\|>)?(?:assistant)?(?P<before>[^<]*)<\|channel\|>(?P<channel>[^\s<]+)"
                       r"(?P<after>[^<]*)(?:<\|constrain\|>[^<]*)?\Z")
RECIPIENT = regex.compile(r"\bto=(?P<recipient>[^\s<]+)")
ROLE_RECIPIENT = regex.compile(r"[ \t]*to=")  # an output that begins inside the role header's recipient
FUNCTIONS = "functions."


def _body_end(text: str, start: int) -> tuple[int, int]:
    """(end of the body, end of the message): the first end token, or the end of the text."""
    found = [(at, at + len(end)) for end in ENDS if (at := text.find(end, start)) >= 0]
    return min(found) if found else (len(text), len(text))


def parse_harmony(text: str, tools: list | None = None, reasoning: bool = True,
                  starts_in_reasoning: bool = False) -> Parsed:
    """``starts_in_reasoning``: the prompt ended with ``<|channel|>analysis<|message|>``."""
    parsed = Parsed(text)
    position = 0
    if starts_in_reasoning:
        end, position = _body_end(text, 0)
        parsed.add(0, end, REASONING if reasoning else CONTENT)
        parsed.add(end, position, MARKUP if reasoning else CONTENT)
    in_role_header = not starts_in_reasoning and ROLE_RECIPIENT.match(text) is not None
    while position < len(text):
        outside = MARKUP if text.endswith(STOPS, 0, position) else FALLBACK  # after a stop token: dropped
        starts = [at for tag in (START, CHANNEL) if (at := text.find(tag, position)) >= 0]
        if in_role_header:
            starts = [0]
        if not starts:
            parsed.add(position, len(text), outside)
            break
        start = min(starts)
        parsed.add(position, start, outside)
        body = text.find(MESSAGE, start)
        header = HEADER.match(text[start:body]) if body >= 0 else None
        if in_role_header:
            in_role_header = False
            if header is None:  # not a header after all: the text is read from its start again
                continue
        elif header is None:
            # Not a message: its first tag is kept as content, and the search goes on after it.
            position = parsed.add(start, start + len(START if text.startswith(START, start) else CHANNEL), FALLBACK)
            continue
        body += len(MESSAGE)
        recipient = RECIPIENT.search(header["before"] + " " + header["after"])
        recipient = recipient["recipient"] if recipient else None
        body_end, position = _body_end(text, body)
        if recipient is None and header["channel"] == "analysis" and not reasoning:
            parsed.add(start, body, FALLBACK)
            parsed.add(body, position, CONTENT)
            continue
        if recipient is None:
            kind = REASONING if header["channel"] == "analysis" else CONTENT
            parsed.add(start, body, MARKUP)
            parsed.add(body, body_end, kind)
            parsed.add(body_end, position, MARKUP)
            continue
        calls = json_object_call(recipient.removeprefix(FUNCTIONS), text[body:body_end]) \
            if recipient.startswith(FUNCTIONS) else None
        parsed.calls += calls or []
        parsed.add(start, position, FALLBACK if calls is None else MARKUP)
    return parsed
