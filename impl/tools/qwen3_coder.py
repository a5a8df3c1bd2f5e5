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

A ``<function=NAME>...</function>`` written without the ``<tool_call>`` around it is a call too, as
vLLM's parser reads it (tests/tool_parsers/test_qwen3coder_tool_parser.py, fallback without tags): its
block runs to the first ``</function>``; a ``<function=`` not followed by a name and ``>`` is text.
"""
from __future__ import annotations

import regex

from .arguments import template_trimmed, text_name, xml_arguments
from .engine import REJECT, TaggedFormat
from .message import ParsedCall
from .partial import XmlCallReader
from .scanner import held_length

_FUNCTION = regex.compile(r"\s*<function=([^>\n]*)>(.*)</function>\s*", regex.DOTALL)
_PARAMETER = regex.compile(r"\s*<parameter=([^>\n]+)>(.*?)</parameter>", regex.DOTALL)
# The two headers as a stream reads them.
_FUNCTION_HEADER = regex.compile(r"\s*<function=([^>\n]*)>")
_PARAMETER_HEADER = regex.compile(r"\s*<parameter=([^>\n]+)>")
# A function written without <tool_call>: its opener, its close, and the rest of its tag (the name).
BARE_FUNCTION, FUNCTION_CLOSE = "<function=", "</function>"
_BARE_NAME = regex.compile(r"([^>\n]+)>")


class Qwen3Coder(TaggedFormat):
    name = "qwen3_coder"
    call_tags = ("<tool_call>", BARE_FUNCTION)
    close_tag = "</tool_call>"

    def block_end(self, opener, body, final, memo):
        if opener != BARE_FUNCTION:
            return super().block_end(opener, body, final, memo)
        name = _BARE_NAME.match(body, partial=True)
        if name is None or (name.partial and final):
            return REJECT
        position = body.find(FUNCTION_CLOSE) if not name.partial else -1
        if position >= 0:
            return position, position + len(FUNCTION_CLOSE)
        return (len(body), len(body)) if final else None

    def readable(self, opener, body):
        return len(body) - held_length(body, (FUNCTION_CLOSE if opener == BARE_FUNCTION else self.close_tag,))

    def call_reader(self, opener, parameters):
        header = _BARE_NAME if opener == BARE_FUNCTION else _FUNCTION_HEADER
        return XmlCallReader(header, _PARAMETER_HEADER, "</parameter>", parameters, value_of=template_trimmed)

    def parse_block(self, opener, body, parameters):
        if opener == BARE_FUNCTION:
            body = BARE_FUNCTION + body + FUNCTION_CLOSE
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

