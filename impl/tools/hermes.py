"""hermes: Hermes 2 Pro, Qwen 2.5 and Qwen 3 — one JSON object per ``<tool_call>`` block.

    <think>reasoning</think>
    Sure.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

-> reasoning "reasoning", content "\\nSure.\\n", one call get_weather with arguments
``{"city": "Paris"}`` exactly as written (``"arguments"`` left out: ``{}``). The tags are plain text
that a JSON string may hold, so a ``</tool_call>`` inside a JSON string does not close the block
(llama.cpp reads the JSON body before the close tag: common/chat-parser.cpp). A block whose text is
not one such object is content, tags and all. Streamed, the call is announced once
``{"name": "...", "arguments": {`` is read, and the arguments follow as written.

The variants models of this family also write, which llama.cpp reads as calls (its
tests/test-chat.cpp, Hermes 2 Pro), are calls too:

    <tool>{"name": "f", "arguments": {...}}</tool>          (and <tools>...</tools>, ```json ... ```)
    <function=f>{...}</function>                           (the arguments object alone)
    <function name="f">{...}</function>

The first three hold the same JSON object as ``<tool_call>`` (the close tag outside JSON strings);
in the two ``<function`` forms the name is in the tag, the block holds the arguments object, and the
first ``</function>`` ends it. A ``<function`` tag not followed by a name and ``>`` is text.
"""
from __future__ import annotations

import regex

from .arguments import JsonScan, call_from_json, object_arguments, text_name
from .engine import REJECT, TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity, json_object_header, json_object_name
from .scanner import held_length

_HEADER = json_object_header(("arguments",))
# Each opener's close tag; the JSON-object openers, then the two that name the function in the tag.
_CLOSE = {"<tool_call>": "</tool_call>", "<tool>": "</tool>", "<tools>": "</tools>", "```json": "```",
          "<function=": "</function>", '<function name="': "</function>"}
# The rest of a named opener's tag, holding the name (a stream reads it up to the arguments object).
_NAME_TAG = {"<function=": regex.compile(r"(?P<name>[^>\n]+)>"), '<function name="': regex.compile(r'(?P<name>[^"\n>]+)">')}
_NAME_HEADER = {opener: regex.compile(tag.pattern + r"[ \t\r\n]*(?=\{)") for opener, tag in _NAME_TAG.items()}


class Hermes(TaggedFormat):
    name = "hermes"
    call_tags = tuple(_CLOSE)
    close_tag = "</tool_call>"

    def block_end(self, opener, body, final, memo):
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
        return len(body) - held_length(body, (_CLOSE[opener],))

    def call_reader(self, opener, parameters):
        if opener in _NAME_HEADER:
            return JsonCallReader(_NAME_HEADER[opener], header_identity)
        return JsonCallReader(_HEADER, json_object_name)

    def parse_block(self, opener, body, parameters):
        if opener in _NAME_TAG:
            tag = _NAME_TAG[opener].match(body)
            name = text_name(tag["name"])
            arguments = object_arguments(body[tag.end():]) if name else None
            return None if arguments is None else [ParsedCall(name, arguments)]
        call = call_from_json(body)
        return None if call is None else [ParsedCall(*call)]
