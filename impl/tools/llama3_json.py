"""llama3_json: Llama 3.1–3.3 JSON calls — a bare JSON object, optionally after ``<|python_tag|>``.

    {"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {}}

-> two calls, arguments as written (``"arguments"`` is accepted for ``"parameters"``). A bare object
counts only where a call may start: at the start of the output or right after another call (calls
are separated by ``;`` and whitespace); ``<|python_tag|>`` may come anywhere. So content that opens
with ``{`` is held until its object closes; if it does not read as a call, it is content, as
written. ``<|python_tag|>`` followed by something other than an object (built-in tool code) is
content text. Streamed, a call is announced once ``{"name": "...", "parameters": {`` is read.
"""
from __future__ import annotations

import regex

from .arguments import JsonScan, call_from_json
from .engine import REJECT, TaggedFormat
from .message import ParsedCall
from .partial import JSON_OBJECT_HEADER, JsonCallReader, json_object_name

_OBJECT_START = regex.compile(r'\s*\{\s*["}]')


class Llama3Json(TaggedFormat):
    name = "llama3_json"
    reasoning_tags = None
    call_tags = ("<|python_tag|>",)
    separator_chars = ";"

    def bare_block(self, text):
        return text.startswith("{")

    def block_end(self, opener, body, final, memo):
        start = _OBJECT_START.match(body, partial=True)
        if start is None:
            return REJECT
        if start.partial:
            return len(body) if final else None
        end = memo.setdefault("scan", JsonScan(start=body.index("{"))).run(body)
        return len(body) if end is None and final else end

    def call_reader(self, opener, parameters):
        return JsonCallReader(JSON_OBJECT_HEADER, json_object_name)

    def parse_block(self, opener, block, parameters):
        call = call_from_json(block)
        return None if call is None else [ParsedCall(*call)]
