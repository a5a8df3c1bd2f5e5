"""hermes: Hermes 2 Pro, Qwen 2.5 and Qwen 3 — one JSON object per ``<tool_call>`` block.

    <think>reasoning</think>
    Sure.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

-> reasoning "reasoning", content "\\nSure.\\n", one call get_weather with arguments
``{"city": "Paris"}`` exactly as written (``"arguments"`` left out: ``{}``; a JSON string holding an
object stands for that object, as vLLM's hermes parser and llama.cpp both read it). The tags are plain text
that a JSON string may hold, so a ``</tool_call>`` inside a JSON string does not close the block
(llama.cpp reads the JSON body before the close tag: common/chat-parser.cpp). A block whose text is
not one such object is content, tags and all. Streamed, the call is announced once
``{"name": "...", "arguments": {`` is read, and the arguments follow as written.

The variants models of this family also write, which llama.cpp reads as calls (its
common/chat.cpp, ``common_chat_parse_hermes_2_pro``, and tests/test-chat.cpp, Hermes 2 Pro), are calls too:

    <tool>{"name": "f", "arguments": {...}}</tool>      (and <tools>, <function_call>, <response>,
                                                        <json>, <xml>, <JSON>)
    ```json {"name": "f", ...} ```                      (```, ```xml; the object may sit in one of
                                                        the tags above inside the fence)
    {"name": "f", "arguments": {...}}                   (a bare object, outside any tag)
    <function=f>{...}</function>                        (the arguments object alone)
    <function name="f">{...}</function>

The tags hold the same JSON object as ``<tool_call>`` (the close tag outside JSON strings). All but
``<tool_call>``, ``<tool>`` and ``<tools>`` open a block only when ``{"name"`` follows (after
whitespace; in a fence after ``json``/``xml`` and an inner tag), as llama.cpp's opening regex
requires, so a code fence, a Granite ``<response>`` or a JSON value in the text stays content and
streams on at once. A bare object is a call only with both ``"name"`` and ``"arguments"`` (JSON data
that merely has a name stays content); it ends where its JSON ends (a bare object that never
becomes valid JSON makes the rest of the output content, as llama3_json's). In the two ``<function``
forms the name is in the tag, the block holds the arguments object, and the first ``</function>``
ends it. A ``<function`` tag not followed by a name and ``>`` is text.

    Sure:
    ```xml
    <response>{"name": "f", "arguments": {"a": 1}}</response>
    ```

-> content "Sure:\n", one call f with ``{"a": 1}``.
"""
from __future__ import annotations

import regex

from .arguments import JsonScan, call_from_json, object_arguments, text_name
from .engine import BRACE, REJECT, TaggedFormat, brace_object_end, header_decided
from .json_prefix import JSON_WHITESPACE
from .message import ParsedCall
from .partial import NAME_KEY_FIRST, JsonCallReader, header_identity, json_object_header, json_object_name
from .scanner import held_length

_HEADER = json_object_header(("arguments",))
# The tags that wrap one JSON call object, each with its close tag.
_WRAPPERS = {"<tool_call>": "</tool_call>", "<tool>": "</tool>", "<tools>": "</tools>",
             "<function_call>": "</function_call>", "<response>": "</response>", "<json>": "</json>",
             "<xml>": "</xml>", "<JSON>": "</JSON>"}
FENCE, BARE = "```", BRACE
# What must follow an opener for it to open a block (else it is text): the wrappers llama.cpp added
# for lenient outputs and the fence need the call object's ``{"name"``, the bare object its ``"name"``.
_CALL_START = r'[ \t\r\n]*\{[ \t\r\n]*"name"'
_INNER_TAG = "|".join(regex.escape(tag) for tag in _WRAPPERS)
_FENCE_PREFIX = regex.compile(rf"(?:json|xml)?[ \t\r\n]*(?P<tag>{_INNER_TAG})?")
_REQUIRED_HEADER = {**{tag: regex.compile(_CALL_START) for tag in ("<function_call>", "<response>", "<json>",
                                                                    "<xml>", "<JSON>")},
                    FENCE: regex.compile(_FENCE_PREFIX.pattern + _CALL_START),
                    BARE: NAME_KEY_FIRST}
_BARE_HEADER = json_object_header(("arguments",), brace=False)
# Each opener's close tag (the bare object has none: its JSON ends it).
_CLOSE = {**_WRAPPERS, FENCE: FENCE, "<function=": "</function>", '<function name="': "</function>"}
# The rest of a named opener's tag, holding the name (a stream reads it up to the arguments object).
_NAME_TAG = {"<function=": regex.compile(r"(?P<name>[^>\n]+)>"), '<function name="': regex.compile(r'(?P<name>[^"\n>]+)">')}
_NAME_HEADER = {opener: regex.compile(tag.pattern + r"[ \t\r\n]*(?=\{)") for opener, tag in _NAME_TAG.items()}


def _fenced_object(body: str) -> str | None:
    """The JSON text of a fence's body: after ``json``/``xml`` and whitespace, the object, maybe in one
    of the wrapper tags (then its close tag must end it, before whitespace); None if the tag is not closed."""
    prefix = _FENCE_PREFIX.match(body)
    inner = body[prefix.end():]
    if prefix["tag"] is None:
        return inner
    inner = inner.rstrip(JSON_WHITESPACE)
    close = _WRAPPERS[prefix["tag"]]
    return inner[:-len(close)] if inner.endswith(close) else None


class Hermes(TaggedFormat):
    name = "hermes"
    call_tags = (*_CLOSE, BARE)
    close_tag = "</tool_call>"

    def block_end(self, opener, body, final, memo):
        required = _REQUIRED_HEADER.get(opener)
        if required is not None and (decided := header_decided(required, body, final, memo)) is not True:
            return decided
        if opener == BARE:
            return brace_object_end(body, final, memo)
        close = _CLOSE[opener]
        if opener in _NAME_TAG:
            tag = _NAME_TAG[opener].match(body, partial=True)
            if tag is None or (tag.partial and final):
                return REJECT
            position = body.find(close, tag.end()) if not tag.partial else -1
            found = position if position >= 0 else None
        else:
            found = memo.setdefault("scan", JsonScan(tag=close)).run(body)
        if found is not None:
            return found, found + len(close)
        return (len(body), len(body)) if final else None

    def readable(self, opener, body):
        return len(body) - held_length(body, (_CLOSE[opener],)) if opener != BARE else len(body)

    def call_reader(self, opener, parameters):
        if opener in _NAME_HEADER:
            return JsonCallReader(_NAME_HEADER[opener], header_identity)
        if opener == FENCE:
            return None  # the fence's inner tag decides only at its end: the calls come whole
        return JsonCallReader(_BARE_HEADER if opener == BARE else _HEADER, json_object_name)

    def parse_block(self, opener, body, parameters):
        if opener in _NAME_TAG:
            tag = _NAME_TAG[opener].match(body)
            name = text_name(tag["name"])
            arguments = object_arguments(body[tag.end():]) if name else None
            return None if arguments is None else [ParsedCall(name, arguments)]
        if opener == FENCE:
            body = _fenced_object(body)
        elif opener == BARE:
            body = BARE + body
        call = None if body is None else call_from_json(body, arguments_required=opener == BARE, string_arguments=True)
        return None if call is None else [ParsedCall(*call)]
