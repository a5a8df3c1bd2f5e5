"""kimi_k2: Kimi K2 — calls named ``functions.NAME:IDX`` inside a tool-calls section.

    <think>reasoning</think>Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

-> get_weather with ``{"city": "Paris"}`` and the id ``functions.get_weather:0`` (the model's own,
which the template writes back). The name is the id less a ``functions.`` prefix and a ``:IDX``
suffix (either may be missing, as transformers' response template reads it). The section tags, also
in the singular spelling the model sometimes writes (vLLM reads both:
vllm/tool_parsers/kimi_k2_tool_parser.py), are syntax next to a call. Arguments that are not a JSON
object make the block content. Streamed, a call is announced once its id and the opening of its
arguments object are read.
"""
from __future__ import annotations

import regex

from .arguments import object_arguments, text_name
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity

_ARGUMENTS = "<|tool_call_argument_begin|>"
_CALL_ID = regex.compile(r"\s*(?:functions\.)?(?P<name>.+?)(?::\d+)?\s*", regex.DOTALL)
# The call id and the opening of the arguments, as a stream reads them (the usual functions.NAME:IDX).
_HEADER = regex.compile(r"\s*(?P<id>(?:functions\.)?(?P<name>[^\s:<]+):\d+)\s*"
                        + regex.escape(_ARGUMENTS) + r"[ \t\r\n]*(?=\{)")


class KimiK2(TaggedFormat):
    name = "kimi_k2"
    call_tags = ("<|tool_call_begin|>",)
    close_tag = "<|tool_call_end|>"
    section_tags = (("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
                    ("<|tool_calls_section_end|>", "<|tool_call_section_end|>"))
    # Reasoning never closed ends where a tool-calls section begins, as vLLM's kimi_k2 reasoning parser,
    # SGLang's (test_kimik2_detector.py) and llama.cpp's (tests/test-chat.cpp, Kimi-K2) all read it.
    reasoning_ends_at_section = True

    def call_reader(self, opener, parameters):
        return JsonCallReader(_HEADER, header_identity)

    def parse_block(self, opener, body, parameters):
        head, separator, raw_arguments = body.partition(_ARGUMENTS)
        call_id = _CALL_ID.fullmatch(head)
        name = call_id and separator and text_name(call_id["name"])
        arguments = object_arguments(raw_arguments) if name else None
        if arguments is None:
            return None
        return [ParsedCall(name, arguments, id=head.strip())]
