"""Whole-text references of the formats whose arguments are written as text in XML-like tags, typed
by the called tool's schema (tool_reference_core.typed_value): qwen3_coder, glm45 and minimax_m2.
A block runs to the first close tag (values included: vLLM's and transformers' parsers end a block
there too); a value is the text between its tags less its layout (line breaks and indentation around
it), and its close tag ends it. Keys are taken as written, names stripped (without ``<``).

    >>> from textbound.oracles.tool_reference_core import parse_tagged
    >>> tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}}]
    >>> parse_tagged(GLM45, "<tool_call>f\\n<arg_key>n</arg_key>\\n<arg_value>7</arg_value>\\n</tool_call>", tools).calls
    [Call(name='f', arguments={'n': 7})]
"""
from __future__ import annotations

from collections.abc import Callable

import regex

from .tool_reference_core import Call, CallTag, TagFormat, parameter_schemas, typed_value

THINK = ("<think>", "</think>")


def _without_layout(value: str) -> str:
    """A value less the layout a template or a model puts around a value written on lines of its own
    (llama.cpp trims values; vLLM's qwen3_coder parser takes one line break off each end): leading
    whitespace holding a line break goes whole, trailing whitespace from its first line break on.
    Spaces on the value's own line stay."""
    body = value.lstrip()
    if "\n" in value[:len(value) - len(body)]:
        value = body
    kept = value.rstrip()
    trailing = value[len(kept):]
    return kept + trailing.split("\n", 1)[0] if "\n" in trailing else value


def _pairs(text: str, parameter: regex.Pattern) -> list[tuple[str, str]] | None:
    """The (key, value) of each parameter ``text`` holds, with only whitespace around them; None if
    anything else stands there. Values lose their layout (``_without_layout``)."""
    pairs, position = [], 0
    while text[position:].strip():
        found = parameter.match(text, position)
        if not found:
            return None
        pairs.append((found["key"], _without_layout(found["value"])))
        position = found.end()
    return pairs


def _typed_call(name: str, pairs: list[tuple[str, str]] | None, tools: list | None,
                untyped_json: bool = False) -> Call | None:
    name = name.strip()
    if pairs is None or not name or "<" in name:
        return None
    schemas = parameter_schemas(tools, name) or {}
    return Call(name, {key: typed_value(value, schemas.get(key), untyped_json) for key, value in pairs})


def _one_call(call: regex.Pattern, parameter: regex.Pattern,
              untyped_json: bool = False) -> Callable[[str, list | None], list[Call] | None]:
    """A body parser for one call: ``call`` matches the whole body (groups ``name`` and ``parameters``);
    ``untyped_json`` as typed_value's."""
    def parse(body: str, tools: list | None = None) -> list[Call] | None:
        match = call.match(body)
        found = match and _typed_call(match["name"], _pairs(match["parameters"], parameter), tools, untyped_json)
        return [found] if found else None
    return parse


# <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>; the function
# written without <tool_call> is a call too, to its first </function> (vLLM's parser reads it:
# tests/tool_parsers/test_qwen3coder_tool_parser.py), where a name and ">" follow "<function=".
QWEN3_FUNCTION = _one_call(
    regex.compile(r"\A\s*<function=(?P<name>[^>\n]*)>(?P<parameters>.*?)</function>\s*\Z", regex.DOTALL),
    regex.compile(r"\s*<parameter=(?P<key>[^>\n]+)>(?P<value>.*?)</parameter>\s*", regex.DOTALL))


def _bare_function(body: str, tools: list | None = None) -> list[Call] | None:
    return QWEN3_FUNCTION("<function=" + body + "</function>", tools)


QWEN3_CODER = TagFormat("qwen3_coder", THINK, "<tool_call>", "</tool_call>", QWEN3_FUNCTION, variants=(
    CallTag("<function=", "</function>", _bare_function, header=regex.compile(r"[^>\n]+>")),))

# <tool_call>NAME\n<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>; a value the schema
# does not type is the JSON it holds, if any (vLLM's glm4_moe parser and llama.cpp's both read it so).
GLM45 = TagFormat("glm45", THINK, "<tool_call>", "</tool_call>", _one_call(
    regex.compile(r"\A(?P<name>[^<\n]*)(?P<parameters>.*)\Z", regex.DOTALL),
    regex.compile(r"\s*<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>\s*", regex.DOTALL),
    untyped_json=True))

# <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n</invoke>\n</minimax:tool_call>:
# the block holds one or more invokes; an <invoke> outside a block is text (vLLM reads invokes inside
# <minimax:tool_call> only: vllm/tool_parsers/minimax_m2_tool_parser.py).
MINIMAX_INVOKE = regex.compile(r'\s*<invoke name="(?P<name>[^"<>]*)">(?P<parameters>.*?)</invoke>\s*', regex.DOTALL)
MINIMAX_PARAMETER = regex.compile(r'\s*<parameter name="(?P<key>[^"]*)">(?P<value>.*?)</parameter>\s*', regex.DOTALL)


def _minimax_calls(body: str, tools: list | None = None) -> list[Call] | None:
    calls, position = [], 0
    while position < len(body) or not calls:
        invoke = MINIMAX_INVOKE.match(body, position)
        call = invoke and _typed_call(invoke["name"], _pairs(invoke["parameters"], MINIMAX_PARAMETER), tools)
        if not call:
            return None
        calls.append(call)
        position = invoke.end()
    return calls


MINIMAX_M2 = TagFormat("minimax_m2", THINK, "<minimax:tool_call>", "</minimax:tool_call>", _minimax_calls)
