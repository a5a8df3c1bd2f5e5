"""glm45: GLM 4.5/4.6 — the name, then key/value pairs, in a ``<tool_call>`` block.

    <think>reasoning</think>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    <arg_key>days</arg_key>
    <arg_value>3</arg_value>
    </tool_call>

-> get_weather with ``{"city": "Paris", "days": 3}`` (the template writes strings raw and other
values as JSON): typed by the schema, and where it names no type, the JSON value the text holds, if
any (vLLM's glm4_moe parser and llama.cpp's, tests/test-chat.cpp GLM-4.6, both read such values as
JSON; a string stays raw only where the schema says string). The name is the text up to the first line break or ``<``; keys are taken as written, values
less the line breaks and indentation around them (arguments.template_trimmed). The first
``</tool_call>`` ends the block, inside a value too (transformers' close tag). A block without a name, with a key lacking its value, or with stray text between pairs is content, as
written. Streamed, the call is announced when its first ``<arg_key>`` follows the name (a call
without arguments comes whole at the block's end), and each pair adds a member as its value closes.
"""
from __future__ import annotations

import regex

from .arguments import template_trimmed, text_name, xml_arguments
from .engine import TaggedFormat
from .json_prefix import JSON_WHITESPACE
from .message import ParsedCall
from .partial import XmlCallReader

_NAME = regex.compile(r"[^<\n]*")
_PAIR = regex.compile(r"\s*<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", regex.DOTALL)
# The call's and a pair's headers as a stream reads them.
_NAME_HEADER = regex.compile(r"([^<\n]*)\s*(?=<arg_key>)")
_PAIR_HEADER = regex.compile(r"\s*<arg_key>(.*?)</arg_key>\s*<arg_value>", regex.DOTALL)


class Glm45(TaggedFormat):
    name = "glm45"
    # Both servers trim content around calls and reasoning (vLLM's glm4_moe parser strips it, llama.cpp's
    # tests/test-chat.cpp GLM-4.6 cases trim it): blank_runs.py.
    edge_whitespace = JSON_WHITESPACE
    call_tags = ("<tool_call>",)
    close_tag = "</tool_call>"

    def call_reader(self, opener, parameters):
        return XmlCallReader(_NAME_HEADER, _PAIR_HEADER, "</arg_value>", parameters,
                             value_of=template_trimmed, untyped_json=True)

    def parse_block(self, opener, body, parameters):
        written = _NAME.match(body)
        name = text_name(written[0])
        if name is None:
            return None
        pairs, index = [], written.end()
        while (pair := _PAIR.match(body, index)) is not None:
            pairs.append((pair[1], template_trimmed(pair[2])))
            index = pair.end()
        if body[index:].strip():
            return None
        return [ParsedCall(name, xml_arguments(name, pairs, parameters, untyped_json=True))]
