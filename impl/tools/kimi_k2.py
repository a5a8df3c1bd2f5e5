"""kimi_k2: Kimi K2 — calls named ``functions.NAME:IDX`` inside a tool-calls section.

    <think>reasoning</think>Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

-> get_weather with ``{"city": "Paris"}`` and the id ``functions.get_weather:0`` (the model's own,
which the template writes back). The section tags (also their singular spelling) are syntax and
are dropped. A call id not of the form ``[functions.]NAME:IDX``, or arguments that are not a JSON
object, make the block content. Streamed, a call is announced once its id and the opening of its
arguments object are read.
"""
from __future__ import annotations

import regex

from .arguments import arguments_from_json
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity

_ARGUMENTS = "<|tool_call_argument_begin|>"
_CALL_ID = regex.compile(r"\s*((?:functions\.)?([^\s:<]+):\d+)\s*")
# The call id and the opening of the arguments, as a stream reads them.
_HEADER = regex.compile(r"\s*(?P<id>(?:functions\.)?(?P<name>[^\s:<]+):\d+)\s*"
                        + regex.escape(_ARGUMENTS) + r"\s*(?=\{)")


class KimiK2(TaggedFormat):
    name = "kimi_k2"
    call_tags = ("<|tool_call_begin|>",)
    close_tag = "<|tool_call_end|>"
    separator_tags = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                      "<|tool_call_section_begin|>", "<|tool_call_section_end|>")

    def call_reader(self, opener, parameters):
        return JsonCallReader(_HEADER, header_identity)

    def parse_block(self, opener, block, parameters):
        head, separator, raw_arguments = block[:-len(self.close_tag)].partition(_ARGUMENTS)
        call_id = _CALL_ID.fullmatch(head)
        arguments = arguments_from_json(raw_arguments) if separator else None
        if call_id is None or arguments is None:
            return None
        return [ParsedCall(call_id[2], arguments, id=call_id[1])]
