"""hermes: Hermes 2 Pro, Qwen 2.5 and Qwen 3 — one JSON object per ``<tool_call>`` block.

    <think>reasoning</think>
    Sure.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

-> reasoning "reasoning", content "Sure.\\n", one call get_weather with arguments
``{"city": "Paris"}`` exactly as written. ``"parameters"`` is accepted for ``"arguments"``, and
arguments given as a JSON-encoded string are decoded. A ``</tool_call>`` inside a JSON string does
not close the block. A block whose text is not one such object is content, tags and all.
Streamed, the call is announced once ``{"name": "...", "arguments": {`` is read (name first, the
arguments an object), and the arguments follow as written.
"""
from __future__ import annotations

from .arguments import JsonScan, call_from_json
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JSON_OBJECT_HEADER, JsonCallReader, json_object_name


class Hermes(TaggedFormat):
    name = "hermes"
    call_tags = ("<tool_call>",)
    close_tag = "</tool_call>"

    def block_end(self, opener, body, final, memo):
        position = memo.setdefault("scan", JsonScan(tag=self.close_tag)).run(body)
        return None if position is None else position + len(self.close_tag)

    def call_reader(self, opener, parameters):
        return JsonCallReader(JSON_OBJECT_HEADER, json_object_name)

    def parse_block(self, opener, block, parameters):
        call = call_from_json(block[:-len(self.close_tag)])
        return None if call is None else [ParsedCall(*call)]
