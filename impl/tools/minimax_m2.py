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

-> reasoning "reasoning", get_weather with ``{"city": "Paris", "days": 3}`` when the schema types
days as an integer (else "3"). One block holds any number of invokes (parallel calls); they come
out as they are read: each announced at its ``<invoke name=...>``, its arguments growing by one
member as each parameter closes. A block with no invoke, an unclosed invoke or parameter, or stray
text is content, as written.
"""
from __future__ import annotations

import regex

from .arguments import xml_arguments
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import XmlCallReader

_INVOKE = regex.compile(r'\s*<invoke name=(?:"([^"]*)"|([^>\s"]+))>(.*?)</invoke>', regex.DOTALL)
_PARAMETER = regex.compile(r'\s*<parameter name=(?:"([^"]*)"|([^>\s"]+))>(.*?)</parameter>', regex.DOTALL)
# An invoke's and a parameter's headers, and an invoke's end, as a stream reads them.
_INVOKE_HEADER = regex.compile(r'\s*<invoke name=(?:"([^"]*)"|([^>\s"]+))>')
_PARAMETER_HEADER = regex.compile(r'\s*<parameter name=(?:"([^"]*)"|([^>\s"]+))>')
_INVOKE_END = regex.compile(r"\s*</invoke>")


class MinimaxM2(TaggedFormat):
    name = "minimax_m2"
    call_tags = ("<minimax:tool_call>",)
    value_span = ("<parameter name=", "</parameter>")
    close_tag = "</minimax:tool_call>"

    def call_reader(self, opener, parameters):
        return XmlCallReader(_INVOKE_HEADER, _PARAMETER_HEADER, "</parameter>", parameters, call_close=_INVOKE_END,
                             name_of=str, key_of=str)

    def parse_block(self, opener, block, parameters):
        body = block[:-len(self.close_tag)]
        calls, index = [], 0
        while (invoke := _INVOKE.match(body, index)) is not None:
            pairs = _parameters(invoke[3])
            name = invoke[1] if invoke[1] is not None else invoke[2]
            if pairs is None or not name:
                return None
            calls.append(ParsedCall(name, xml_arguments(name, pairs, parameters)))
            index = invoke.end()
        return None if body[index:].strip() else calls


def _parameters(inner: str) -> list[tuple[str, str]] | None:
    pairs, index = [], 0
    while (parameter := _PARAMETER.match(inner, index)) is not None:
        pairs.append((parameter[1] if parameter[1] is not None else parameter[2], parameter[3]))
        index = parameter.end()
    return None if inner[index:].strip() else pairs
