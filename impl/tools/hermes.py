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
"""
from __future__ import annotations

from .arguments import JsonScan, call_from_json
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, json_object_header, json_object_name

_HEADER = json_object_header(("arguments",))


class Hermes(TaggedFormat):
    name = "hermes"
    call_tags = ("<tool_call>",)
    close_tag = "</tool_call>"

    def block_end(self, opener, body, final, memo):
        return self.found_close(body, memo.setdefault("scan", JsonScan(tag=self.close_tag)).run(body), final)

    def call_reader(self, opener, parameters):
        return JsonCallReader(_HEADER, json_object_name)

    def parse_block(self, opener, body, parameters):
        call = call_from_json(body)
        return None if call is None else [ParsedCall(*call)]
