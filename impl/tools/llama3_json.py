"""llama3_json: Llama 3.1–3.3 JSON calls — bare JSON objects, optionally after ``<|python_tag|>``.

    {"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {}}

-> two calls, arguments as written (``"arguments"`` is accepted for ``"parameters"``, not both; one of
them is required: ``{"name": "f"}`` alone is content, as vLLM's parser and llama.cpp's regex read it). A
call may begin where the format puts one: at the start of the output (after whitespace, which is
content), after ``<|python_tag|>`` (anywhere, after whitespace), or right after another call, with
whitespace and at most one ``;`` between them (vLLM separates calls by "; ":
vllm/tool_parsers/llama_tool_parser.py). So text after a call is held while it may still be such a
separator. A ``{`` where a call may begin that does not read as a call makes the rest of the output
content, as written; ``<|python_tag|>`` followed by something other than an object (built-in tool
code) is content text. Streamed, a call is announced once ``{"name": "...", "parameters": {`` is read.
"""
from __future__ import annotations

import regex

from .arguments import call_from_json
from .engine import CONTENT_FOLLOWS, REJECT, WAIT, TaggedFormat
from .json_prefix import JsonPrefix
from .message import ParsedCall
from .partial import JsonCallReader, json_object_header, json_object_name

_ARGUMENT_KEYS = ("parameters", "arguments")
_HEADER = json_object_header(_ARGUMENT_KEYS)
_OBJECT_START = regex.compile(r"[ \t\r\n]*\{")
_SEPARATOR = regex.compile(r"[ \t\r\n]*(?:;[ \t\r\n]*)?")


class Llama3Json(TaggedFormat):
    name = "llama3_json"
    reasoning_tags = None
    call_tags = ("<|python_tag|>",)
    bare_start = True

    def block_end(self, opener, body, final, memo):
        start = _OBJECT_START.match(body, partial=True)
        if start is None:
            return REJECT
        if start.partial:
            return (len(body), len(body)) if final else None
        scan = memo.setdefault("scan", JsonPrefix(start.end() - 1))
        end = scan.run(body)
        if end is not None and "call" not in memo:
            memo["call"] = self.parse_block(opener, body[:end], None) is not None
        if end is None or not memo["call"]:
            # Not a call: the rest of the output is content (the format has no end tag to stop at).
            return (len(body), len(body)) if final else None
        return end, end

    def glue(self, text, final):
        separator = _SEPARATOR.match(text)
        if separator.end() == len(text) and not final:
            return WAIT
        return (separator.end(),) if text.startswith("{", separator.end()) else CONTENT_FOLLOWS

    def call_reader(self, opener, parameters):
        return JsonCallReader(_HEADER, json_object_name)

    def parse_block(self, opener, body, parameters):
        call = call_from_json(body, _ARGUMENT_KEYS, arguments_required=True)
        return None if call is None else [ParsedCall(*call)]
