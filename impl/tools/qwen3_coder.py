"""qwen3_coder: Qwen3-Coder's XML calls, one function per ``<tool_call>`` block.

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

-> get_weather with arguments ``{"city": "Paris", "days": 3}`` when the tool's schema says days is
an integer (``"3"`` without a schema: a value stays a string unless its schema types it). The line
breaks and indentation around a value are layout and are removed (arguments.template_trimmed); keys
are taken as written. The
first ``</tool_call>`` ends the block, inside a value too (as vLLM's regex and transformers' close
tag do: vllm/tool_parsers/qwen3coder_tool_parser.py). A block that is not exactly one
``<function=...>`` with parameters (and whitespace) is content, as written. Streamed, the call is
announced at ``<function=NAME>`` and its arguments grow by one ``"key": value`` member as each
parameter closes (``}`` at the end).
"""
from __future__ import annotations

import regex

from .arguments import template_trimmed, text_name, xml_arguments
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import XmlCallReader

_FUNCTION = regex.compile(r"\s*<function=([^>\n]*)>(.*)</function>\s*", regex.DOTALL)
_PARAMETER = regex.compile(r"\s*<parameter=([^>\n]+)>(.*?)</parameter>", regex.DOTALL)
# The two headers as a stream reads them.
_FUNCTION_HEADER = regex.compile(r"\s*<function=([^>\n]*)>")
_PARAMETER_HEADER = regex.compile(r"\s*<parameter=([^>\n]+)>")


class Qwen3Coder(TaggedFormat):
    name = "qwen3_coder"
    call_tags = ("<tool_call>",)
    close_tag = "</tool_call>"

    def call_reader(self, opener, parameters):
        return XmlCallReader(_FUNCTION_HEADER, _PARAMETER_HEADER, "</parameter>", parameters,
                             value_of=template_trimmed)

    def parse_block(self, opener, body, parameters):
        function = _FUNCTION.fullmatch(body)
        name = function and text_name(function[1])
        if not name:
            return None
        pairs, index, inner = [], 0, function[2]
        while (parameter := _PARAMETER.match(inner, index)) is not None:
            pairs.append((parameter[1], template_trimmed(parameter[2])))
            index = parameter.end()
        if inner[index:].strip():
            return None
        return [ParsedCall(name, xml_arguments(name, pairs, parameters))]

