"""minimax_m2: MiniMax-M2 — ``<invoke>`` elements inside a ``<minimax:tool_call>`` block.

The template opens the reasoning (its prompt ends with ``<think>\\n``), so streams usually start
with ``starts_in_reasoning=True``::

    reasoning</think>

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    <parameter name="days">3</parameter>
    </invoke>
    </minimax:tool_call>

-> reasoning "reasoning", no content (whitespace alone beside a call), get_weather with
``{"city": "Paris", "days": 3}`` when the schema types days as an integer (else "3"); values lose
the line breaks and indentation around them (arguments.template_trimmed). The block is the call
tag: one block holds any number of invokes (parallel calls), and an ``<invoke>`` outside a block
is text (vLLM reads invokes inside ``<minimax:tool_call>`` only:
vllm/tool_parsers/minimax_m2_tool_parser.py). Calls come out as they are read: each announced at
its ``<invoke name="...">``, its arguments growing by one member as each parameter closes. The
first ``</minimax:tool_call>`` ends the block. A block with no invoke, an unclosed invoke or
parameter, or stray text is content, as written.
"""
from __future__ import annotations

import regex

from .arguments import template_trimmed, text_name, xml_arguments
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import XmlCallReader

_INVOKE = regex.compile(r'\s*<invoke name="([^"<>]*)">(.*?)</invoke>', regex.DOTALL)
_PARAMETER = regex.compile(r'\s*<parameter name="([^"]*)">(.*?)</parameter>', regex.DOTALL)
# An invoke's and a parameter's headers, and an invoke's end, as a stream reads them.
_INVOKE_HEADER = regex.compile(r'\s*<invoke name="([^"<>]*)">')
_PARAMETER_HEADER = regex.compile(r'\s*<parameter name="([^"]*)">')
_INVOKE_END = regex.compile(r"\s*</invoke>")


class MinimaxM2(TaggedFormat):
    name = "minimax_m2"
    call_tags = ("<minimax:tool_call>",)
    close_tag = "</minimax:tool_call>"

    def call_reader(self, opener, parameters):
        return XmlCallReader(_INVOKE_HEADER, _PARAMETER_HEADER, "</parameter>", parameters, call_close=_INVOKE_END,
                             value_of=template_trimmed)

    def parse_block(self, opener, body, parameters):
        calls, index = [], 0
        while (invoke := _INVOKE.match(body, index)) is not None:
            name, pairs = text_name(invoke[1]), _parameters(invoke[2])
            if name is None or pairs is None:
                return None
            calls.append(ParsedCall(name, xml_arguments(name, pairs, parameters)))
            index = invoke.end()
        return None if body[index:].strip() else calls


def _parameters(inner: str) -> list[tuple[str, str]] | None:
    pairs, index = [], 0
    while (parameter := _PARAMETER.match(inner, index)) is not None:
        pairs.append((parameter[1], template_trimmed(parameter[2])))
        index = parameter.end()
    return None if inner[index:].strip() else pairs
