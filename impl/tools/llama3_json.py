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

A call may also begin after text, at a ``{`` that ``"name"`` follows, as vLLM finds calls there
(tests/tool_parsers/test_llama3_json_tool_parser.py, multiple JSON with surrounding text; transformers
has no template for this format). The text before it stays content; such an object that is JSON but
not a call is content and the text goes on, one that never becomes JSON makes the rest content::

    Here: {"name": "f", "parameters": {}} ok  ->  content "Here:  ok", one call f with {}
"""
from __future__ import annotations

import regex

from .arguments import call_from_json
from .engine import BRACE, CONTENT_FOLLOWS, REJECT, WAIT, TaggedFormat, brace_object_end, header_decided
from .json_prefix import JsonPrefix
from .message import ParsedCall
from .partial import NAME_KEY_FIRST, JsonCallReader, json_object_header, json_object_name

_ARGUMENT_KEYS = ("parameters", "arguments")
_HEADER = json_object_header(_ARGUMENT_KEYS)
_OBJECT_START = regex.compile(r"[ \t\r\n]*\{")
_SEPARATOR = regex.compile(r"[ \t\r\n]*(?:;[ \t\r\n]*)?")
_BRACE_HEADER = json_object_header(_ARGUMENT_KEYS, brace=False)


class Llama3Json(TaggedFormat):
    name = "llama3_json"
    reasoning_tags = None
    call_tags = ("<|python_tag|>", BRACE)
    bare_start = True

    def block_end(self, opener, body, final, memo):
        if opener == BRACE:  # a brace in text: a block only where "name" follows it
            decided = header_decided(NAME_KEY_FIRST, body, final, memo)
            return brace_object_end(body, final, memo) if decided is True else decided
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
        return JsonCallReader(_BRACE_HEADER if opener == BRACE else _HEADER, json_object_name)

    def parse_block(self, opener, body, parameters):
        call = call_from_json(BRACE + body if opener == BRACE else body, _ARGUMENT_KEYS, arguments_required=True)
        return None if call is None else [ParsedCall(*call)]
