"""Whole-text references of the formats whose arguments are written as JSON: hermes, deepseek_r1,
deepseek_v31, kimi_k2, mistral (both forms) and llama3_json.

    >>> from oracles.tool_reference_core import parse_tagged
    >>> parse_tagged(HERMES, '<think>hm</think>Hi<tool_call>{"name": "f", "arguments": {"a": "</tool_call>"}}</tool_call>').message()
    {'content': 'Hi', 'reasoning_content': 'hm', 'calls': [{'name': 'f', 'arguments': {'a': '</tool_call>'}}]}
"""
from __future__ import annotations

import regex

from .tool_reference_core import (CONTENT, FALLBACK, JSON_WHITESPACE, MARKUP, Call, NotJson, Parsed, TagFormat,
                                  call_from_object, json_object_call, json_prefix, strict_json)

THINK = ("<think>", "</think>")


def _object_call(body: str, tools: list | None = None) -> list[Call] | None:
    """``{"name": "f", "arguments": {...}}`` (arguments may be left out)."""
    try:
        call = call_from_object(strict_json(body))
    except NotJson:
        return None
    return None if call is None else [call]


# <tool_call>{"name": "f", "arguments": {...}}</tool_call>, reasoning in <think>...</think>.
HERMES = TagFormat("hermes", THINK, "<tool_call>", "</tool_call>", _object_call)

# DeepSeek V3/R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>,
# the calls inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>.
DEEPSEEK_SECTION = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
DEEPSEEK_R1_BODY = regex.compile(r"\A(?:function)?<｜tool▁sep｜>(?P<name>[^\n]*)\n```(?:json)?\n(?P<arguments>.*)\n```\Z",
                                 regex.DOTALL)


def _deepseek_r1_call(body: str, tools: list | None = None) -> list[Call] | None:
    match = DEEPSEEK_R1_BODY.match(body)
    return match and json_object_call(match["name"].strip(), match["arguments"])


DEEPSEEK_R1 = TagFormat("deepseek_r1", THINK, "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _deepseek_r1_call,
                        section=DEEPSEEK_SECTION)

# DeepSeek V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>.
TOOL_SEP = "<｜tool▁sep｜>"


def _deepseek_v31_call(body: str, tools: list | None = None) -> list[Call] | None:
    name, sep, arguments = body.partition(TOOL_SEP)
    return json_object_call(name.strip(), arguments) if sep else None


DEEPSEEK_V31 = TagFormat("deepseek_v31", THINK, "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _deepseek_v31_call,
                         section=DEEPSEEK_SECTION)

# Kimi K2: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>, the id naming
# the function, inside <|tool_calls_section_begin|>...<|tool_calls_section_end|>.
KIMI_ID = regex.compile(r"\A\s*(?:functions\.)?(?P<name>.+?)(?::\d+)?\s*\Z", regex.DOTALL)
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"


def _kimi_call(body: str, tools: list | None = None) -> list[Call] | None:
    call_id, sep, arguments = body.partition(ARGUMENT_BEGIN)
    match = KIMI_ID.match(call_id)
    return json_object_call(match["name"], arguments) if sep and match else None


KIMI_K2 = TagFormat("kimi_k2", THINK, "<|tool_call_begin|>", "<|tool_call_end|>", _kimi_call,
                    section=("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"))

# Mistral: [TOOL_CALLS] then either a JSON list of {"name", "arguments"} objects or NAME[ARGS]{...}
# (NAME[CALL_ID]ID[ARGS]{...} too); a call ends where its JSON does. Reasoning in [THINK]...[/THINK].
MISTRAL_NAMED = regex.compile(r"\A(?P<name>[^\[\]]+?)(?:\[CALL_ID\][^\[\]]*)?\[ARGS\](?P<arguments>.*)\Z", regex.DOTALL)
ARGS_TAG = "[ARGS]"


def _mistral_block_end(text: str, body_start: int) -> tuple[int, int]:
    """The end of the JSON list, or of the JSON object after [ARGS]; else the next [TOOL_CALLS] or the
    end of the text (a malformed call)."""
    next_call = text.find(MISTRAL.call_open, body_start)
    malformed = (next_call, next_call) if next_call >= 0 else (len(text), len(text))
    if text[body_start:].lstrip(JSON_WHITESPACE).startswith("["):
        json_start = body_start
    else:
        args = text.find(ARGS_TAG, body_start)
        if args < 0 or 0 <= next_call < args:
            return malformed
        json_start = args + len(ARGS_TAG)
    try:
        _, end = json_prefix(text, json_start)
    except NotJson:
        return malformed
    return end, end


def _mistral_calls(body: str, tools: list | None = None) -> list[Call] | None:
    if body.lstrip(JSON_WHITESPACE).startswith("["):
        try:
            items = strict_json(body)
        except NotJson:
            return None
        calls = [call_from_object(item) for item in items]
        return calls if calls and None not in calls else None
    match = MISTRAL_NAMED.match(body)
    return match and json_object_call(match["name"].strip(), match["arguments"])


MISTRAL = TagFormat("mistral", ("[THINK]", "[/THINK]"), "[TOOL_CALLS]", None, _mistral_calls,
                    block_end=_mistral_block_end)

# Llama 3.1-3.3: the whole output is one or more {"name", "parameters"} objects separated by ';', or
# whatever follows <|python_tag|> is. Anything else is content.
PYTHON_TAG = "<|python_tag|>"
LLAMA3_TAGS = (PYTHON_TAG,)


def _llama3_calls(text: str, start: int) -> list[Call] | None:
    calls, position = [], start
    while True:
        try:
            value, position = json_prefix(text, position)
        except NotJson:
            return None
        call = call_from_object(value, ("parameters", "arguments"))
        if call is None:
            return None
        calls.append(call)
        rest = text[position:].lstrip(JSON_WHITESPACE)
        if not rest:
            return calls
        if not rest.startswith(";"):
            return None
        position = len(text) - len(rest) + 1


def parse_llama3_json(text: str, tools: list | None = None, reasoning: bool = True,
                      starts_in_reasoning: bool = False) -> Parsed:
    """No reasoning in this format: the flags change nothing."""
    parsed = Parsed(text)
    tag = text.find(PYTHON_TAG)
    start = parsed.add(0, tag, CONTENT) if tag >= 0 else 0
    calls = _llama3_calls(text, start + len(PYTHON_TAG) if tag >= 0 else start)
    if calls is None:
        # Text that may still have become calls (from the tag, or a JSON object from the start) waits for the end.
        maybe_calls = tag >= 0 or text.lstrip(JSON_WHITESPACE).startswith("{")
        parsed.add(start, len(text), FALLBACK if maybe_calls else CONTENT)
    else:
        parsed.add(start, len(text), MARKUP)
        parsed.calls = calls
    return parsed
