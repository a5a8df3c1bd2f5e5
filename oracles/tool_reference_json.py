"""Whole-text references of the formats whose arguments are written as JSON: hermes, deepseek_r1,
deepseek_v31, kimi_k2, mistral (both forms) and llama3_json.

    >>> from textbound.oracles.tool_reference_core import parse_tagged
    >>> parse_tagged(HERMES, '<think>hm</think>Hi<tool_call>{"name": "f", "arguments": {"a": "</tool_call>"}}</tool_call>').message()
    {'content': 'Hi', 'reasoning_content': 'hm', 'calls': [{'name': 'f', 'arguments': {'a': '</tool_call>'}}]}
"""
from __future__ import annotations

import regex

from .tool_reference_core import (CONTENT, FALLBACK, JSON_WHITESPACE, Call, CallTag, NotJson, Parsed, TagFormat,
                                  call_from_object, json_object_call, json_prefix, strict_json)

THINK = ("<think>", "</think>")


def _object_call(body: str, tools: list | None = None) -> list[Call] | None:
    """``{"name": "f", "arguments": {...}}`` (arguments may be left out, or written as a JSON string that
    holds the object: vLLM's hermes parser and llama.cpp both read that)."""
    try:
        call = call_from_object(strict_json(body), string_arguments=True)
    except NotJson:
        return None
    return None if call is None else [call]


# <tool_call>{"name": "f", "arguments": {...}}</tool_call>, reasoning in <think>...</think>. Its tags are
# plain text a JSON string may hold, so the close tag counts only outside JSON strings (llama.cpp reads
# the JSON body before the close tag: common/chat-parser.cpp).
# Models of the family also write calls in other forms, which llama.cpp reads (common/chat.cpp,
# common_chat_parse_hermes_2_pro; tests/test-chat.cpp, Hermes 2 Pro): the same object in <tool>, <tools>,
# <function_call>, <response>, <json>, <xml> or <JSON>; in a ``` fence (```json, ```xml), maybe inside one
# of those tags; bare, outside any tag; the arguments object alone after the name in <function=NAME> or
# <function name="NAME">, to the first </function>. As llama.cpp's opening regex, the forms it added for
# lenient outputs open a block only where the object's {"name" follows (else the opener is text); a bare
# object is a call only with an "arguments" key too, and its JSON ends it.
FUNCTION_NAME_TAGS = {"<function=": r"(?P<name>[^>\n]+)>", '<function name="': r'(?P<name>[^"\n>]+)">'}
WRAPPER_TAGS = ("<tool_call>", "<tool>", "<tools>", "<function_call>", "<response>", "<json>", "<xml>", "<JSON>")
OBJECT_FOLLOWS = r'\s*\{\s*"name"'
FENCE_OPENING = r"(?:json|xml)?\s*(?P<tag>" + "|".join(regex.escape(tag) for tag in WRAPPER_TAGS) + ")?"


def _named_call(name_tag: regex.Pattern):
    def parse(body: str, tools: list | None = None) -> list[Call] | None:
        tag = name_tag.match(body)
        if tag is None:  # the close tag cuts the name tag itself (<function=a</function>>): not a call
            return None
        return json_object_call(tag["name"], body[tag.end():])
    return parse


def _fenced_call(body: str, tools: list | None = None) -> list[Call] | None:
    """A fence's body: ``json``/``xml``, whitespace, the call object, maybe in a wrapper tag."""
    opening = regex.match(FENCE_OPENING, body)
    inner = body[opening.end():]
    if opening["tag"]:
        close = "</" + opening["tag"][1:]
        inner = inner.rstrip(JSON_WHITESPACE)
        if not inner.endswith(close):
            return None
        inner = inner[:-len(close)]
    return _object_call(inner)


def _bare_call(body: str, tools: list | None = None) -> list[Call] | None:
    """The rest of a bare object after its ``{``: a call only when it has ``"arguments"`` too."""
    try:
        call = call_from_object(strict_json("{" + body), arguments_required=True, string_arguments=True)
    except NotJson:
        return None
    return None if call is None else [call]


HERMES_VARIANTS = (
    *(CallTag(open, "</" + open[1:], _object_call, close_outside_strings=True,
              header=None if open in ("<tool>", "<tools>") else regex.compile(OBJECT_FOLLOWS))
      for open in WRAPPER_TAGS[1:]),
    CallTag("```", "```", _fenced_call, close_outside_strings=True, header=regex.compile(FENCE_OPENING + OBJECT_FOLLOWS)),
    CallTag("{", "", _bare_call, header=regex.compile(r'\s*"name"')),
    *(CallTag(open, "</function>", _named_call(regex.compile(tag)), header=regex.compile(tag))
      for open, tag in FUNCTION_NAME_TAGS.items()))
HERMES = TagFormat("hermes", THINK, "<tool_call>", "</tool_call>", _object_call, close_outside_strings=True,
                   variants=HERMES_VARIANTS)

# DeepSeek V3/R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>,
# the calls inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>.
DEEPSEEK_SECTIONS = (("<｜tool▁calls▁begin｜>",), ("<｜tool▁calls▁end｜>",))
DEEPSEEK_R1_BODY = regex.compile(r"\A(?:function)?<｜tool▁sep｜>(?P<name>[^\n]*)\n```(?:json)?\n(?P<arguments>.*)\n```\Z",
                                 regex.DOTALL)


def _deepseek_r1_call(body: str, tools: list | None = None) -> list[Call] | None:
    match = DEEPSEEK_R1_BODY.match(body)
    return match and json_object_call(match["name"], match["arguments"])


DEEPSEEK_R1 = TagFormat("deepseek_r1", THINK, "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _deepseek_r1_call,
                        sections=DEEPSEEK_SECTIONS)

# DeepSeek V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>.
TOOL_SEP = "<｜tool▁sep｜>"


def _deepseek_v31_call(body: str, tools: list | None = None) -> list[Call] | None:
    name, sep, arguments = body.partition(TOOL_SEP)
    return json_object_call(name, arguments) if sep else None


DEEPSEEK_V31 = TagFormat("deepseek_v31", THINK, "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _deepseek_v31_call,
                         sections=DEEPSEEK_SECTIONS)

# Kimi K2: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>, the id naming
# the function, inside <|tool_calls_section_begin|>...<|tool_calls_section_end|> (vLLM also reads the singular
# spelling the model sometimes writes: vllm/tool_parsers/kimi_k2_tool_parser.py).
KIMI_ID = regex.compile(r"\A\s*(?:functions\.)?(?P<name>.+?)(?::\d+)?\s*\Z", regex.DOTALL)
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"


def _kimi_call(body: str, tools: list | None = None) -> list[Call] | None:
    call_id, sep, arguments = body.partition(ARGUMENT_BEGIN)
    match = KIMI_ID.match(call_id)
    return json_object_call(match["name"], arguments) if sep and match else None


# Reasoning never closed ends where a tool-calls section begins: vLLM's kimi_k2 reasoning parser, SGLang's
# (test/registered/function_call/test_kimik2_detector.py) and llama.cpp's (tests/test-chat.cpp) all read it so.
KIMI_K2 = TagFormat("kimi_k2", THINK, "<|tool_call_begin|>", "<|tool_call_end|>", _kimi_call, sections=(
    ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
    ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")), reasoning_ends_at_section=True)

# Mistral: [TOOL_CALLS] then either a JSON list of {"name", "arguments"} objects, or NAME[ARGS]{...}
# (NAME[CALL_ID]ID[ARGS]{...} too), or NAME{...} (tokenizers that write no [ARGS]: a name without
# whitespace or brackets, the object right after it; vllm/tool_parsers/mistral_tool_parser.py reads both);
# a call ends where its JSON does. Reasoning in [THINK]...[/THINK].
MISTRAL_NAMED = regex.compile(r"\A(?P<name>[^\[\]]+?)(?:\[CALL_ID\][^\[\]]*)?\[ARGS\](?P<arguments>.*)\Z", regex.DOTALL)
MISTRAL_BARE = regex.compile(r"\A(?P<name>[^\s\[\]{}]+)(?P<arguments>\{.*)\Z", regex.DOTALL)
MISTRAL_BARE_NAME = regex.compile(r"[^\s\[\]{}]+")
TOOL_CALLS, ARGS_TAG = "[TOOL_CALLS]", "[ARGS]"


def _mistral_block_end(text: str, body_start: int) -> tuple[int, int]:
    """The end of the JSON list, or of the JSON value after [ARGS]; where no JSON value stands there,
    the block is malformed and runs to the next [TOOL_CALLS] or the end of the text."""
    next_call = text.find(TOOL_CALLS, body_start)
    limit = next_call if next_call >= 0 else len(text)
    bare_name = MISTRAL_BARE_NAME.match(text, body_start)
    if text[body_start:].lstrip(JSON_WHITESPACE).startswith("["):
        json_start = body_start
    elif bare_name and text.startswith("{", bare_name.end()):
        json_start = bare_name.end()
    else:
        args = text.find(ARGS_TAG, body_start)
        if args < 0 or args > limit:
            return limit, limit
        json_start = args + len(ARGS_TAG)
    try:
        _, end = json_prefix(text, json_start)
    except NotJson:
        return limit, limit
    return end, end


def _mistral_calls(body: str, tools: list | None = None) -> list[Call] | None:
    if body.lstrip(JSON_WHITESPACE).startswith("["):
        try:
            items = strict_json(body)
        except NotJson:
            return None
        calls = [call_from_object(item) for item in items]
        return calls if calls and None not in calls else None
    match = MISTRAL_NAMED.match(body) or MISTRAL_BARE.match(body)
    return match and json_object_call(match["name"], match["arguments"])


MISTRAL = TagFormat("mistral", ("[THINK]", "[/THINK]"), TOOL_CALLS, None, _mistral_calls, block_end=_mistral_block_end)

# Llama 3.1-3.3: calls are {"name", "parameters"} objects ("parameters" or "arguments" required: an object
# with a name alone is content, as vLLM's llama3_json parser and llama.cpp's Llama 3.x regex both read it:
# tests/tool_parsers/test_llama3_json_tool_parser.py, common/chat.cpp), where a call may begin: at the start of the output
# (after whitespace), after <|python_tag|> (anywhere, after whitespace), or right after another call and
# whitespace with at most one ';' (vLLM separates calls by '; ': vllm/tool_parsers/llama_tool_parser.py).
# A call may also begin after text, at a '{' that "name" follows (vLLM finds calls there:
# test_llama3_json_tool_parser.py, multiple JSON with surrounding text); such an object that is JSON but not a
# call is content and the text goes on, one that never becomes JSON makes the rest content.
PYTHON_TAG = "<|python_tag|>"
LLAMA3_TAGS = (PYTHON_TAG, "{")
CALL_OBJECT_IN_TEXT = regex.compile(r'\{[ \t\n\r]*"name"')  # where a call object opens outside any tag
LLAMA3_SEPARATOR = regex.compile(r"[ \t\n\r]*(?:;[ \t\n\r]*)?")


def _llama3_calls(parsed: Parsed, markup_from: int, brace: int) -> int:
    """The calls from the ``{`` at ``brace`` on (their markup from ``markup_from``); returns where content
    resumes. A call that does not read makes everything from ``markup_from`` to the end content."""
    text = parsed.text
    while True:
        try:
            value, end = json_prefix(text, brace)
        except NotJson:
            value, end = None, len(text)
        call = call_from_object(value, ("parameters", "arguments"), arguments_required=True)
        if call is None:
            return parsed.add(markup_from, len(text), FALLBACK)
        parsed.calls.append(call)
        parsed.add_call_markup(markup_from, end)
        following = LLAMA3_SEPARATOR.match(text, end).end()
        if not text.startswith("{", following):
            return end
        markup_from, brace = end, following


def _llama3_object_in_text(parsed: Parsed, brace: int) -> int:
    """The object at ``brace`` in text: calls if it reads as one (and those glued after it), else content
    to its end, or to the text's end if it never becomes JSON. Returns where content resumes."""
    try:
        value, end = json_prefix(parsed.text, brace)
    except NotJson:
        return parsed.add(brace, len(parsed.text), FALLBACK)
    if call_from_object(value, ("parameters", "arguments"), arguments_required=True) is None:
        return parsed.add(brace, end, FALLBACK)
    return _llama3_calls(parsed, brace, brace)


def parse_llama3_json(text: str, tools: list | None = None, reasoning: bool = True,
                      starts_in_reasoning: bool = False) -> Parsed:
    """No reasoning in this format: the flags change nothing. <|python_tag|> followed by anything but a
    JSON object (built-in tool code) is content, tag included."""
    parsed = Parsed(text)
    first = len(text) - len(text.lstrip(JSON_WHITESPACE))
    position = 0
    if text.startswith("{", first):
        parsed.add(0, first, CONTENT)
        position = _llama3_calls(parsed, first, first)
    while position < len(text):
        tag = text.find(PYTHON_TAG, position)
        in_text = CALL_OBJECT_IN_TEXT.search(text, position)
        if in_text is not None and (tag < 0 or in_text.start() < tag):
            parsed.add(position, in_text.start(), CONTENT)
            position = _llama3_object_in_text(parsed, in_text.start())
            continue
        if tag < 0:
            parsed.add(position, len(text), CONTENT)
            break
        parsed.add(position, tag, CONTENT)
        after = tag + len(PYTHON_TAG)
        brace = len(text) - len(text[after:].lstrip(JSON_WHITESPACE))
        if text.startswith("{", brace):
            position = _llama3_calls(parsed, tag, brace)
        else:
            position = parsed.add(tag, after, FALLBACK)
    return parsed
