"""Whole-text references of the formats whose arguments are written as text in XML-like tags, typed
by the called tool's schema (tool_reference_core.typed_value): qwen3_coder, glm45 and minimax_m2.
A value is the text between its tags, unescaped; a closing tag inside a value ends it.

    >>> from oracles.tool_reference_core import parse_tagged
    >>> tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}}]
    >>> parse_tagged(GLM45, "<tool_call>f\\n<arg_key>n</arg_key>\\n<arg_value>7</arg_value>\\n</tool_call>", tools).calls
    [Call(name='f', arguments={'n': 7})]
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import regex

from .tool_reference_core import Call, TagFormat, parameter_schemas, typed_value

THINK = ("<think>", "</think>")


def _typed_call(name: str, pairs: Iterable[tuple[str, str]], tools: list | None) -> list[Call]:
    schemas = parameter_schemas(tools, name) or {}
    return [Call(name, {key: typed_value(value, schemas.get(key)) for key, value in pairs})]


def _xml_call(call: regex.Pattern, parameter: regex.Pattern, trim: str = "") -> Callable[[str, list | None], list[Call] | None]:
    """A body parser: ``call`` matches the whole body (groups ``name`` and ``parameters``), ``parameter``
    matches each parameter (groups ``key`` and ``value``) with only whitespace around them; ``trim``:
    one such character taken off each end of a value (the line breaks a template puts around it)."""
    def parse(body: str, tools: list | None = None) -> list[Call] | None:
        match = call.match(body)
        if not match or not match["name"].strip():
            return None
        pairs, position, text = [], 0, match["parameters"]
        while text[position:].strip():
            found = parameter.match(text, position)
            if not found:
                return None
            value = found["value"]
            if trim:
                value = value.removeprefix(trim).removesuffix(trim)
            pairs.append((found["key"], value))
            position = found.end()
        return _typed_call(match["name"].strip(), pairs, tools)
    return parse


# <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
QWEN3_CODER = TagFormat("qwen3_coder", THINK, "<tool_call>", "</tool_call>", _xml_call(
    regex.compile(r"\A\s*<function=(?P<name>[^>\n]*)>(?P<parameters>.*?)</function>\s*\Z", regex.DOTALL),
    regex.compile(r"\s*<parameter=(?P<key>[^>\n]+)>(?P<value>.*?)</parameter>\s*", regex.DOTALL), trim="\n"),
    json_body=False)

# <tool_call>NAME\n<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>
GLM45 = TagFormat("glm45", THINK, "<tool_call>", "</tool_call>", _xml_call(
    regex.compile(r"\A(?P<name>[^<\n]*)(?P<parameters>.*)\Z", regex.DOTALL),
    regex.compile(r"\s*<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>\s*", regex.DOTALL)),
    json_body=False)

# <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n</invoke>\n</minimax:tool_call>
MINIMAX_M2 = TagFormat("minimax_m2", THINK, '<invoke name="', "</invoke>", _xml_call(
    regex.compile(r'\A(?P<name>[^"<>]*)">(?P<parameters>.*)\Z', regex.DOTALL),
    regex.compile(r'\s*<parameter name="(?P<key>[^"]*)">(?P<value>.*?)</parameter>\s*', regex.DOTALL)),
    json_body=False, section=("<minimax:tool_call>", "</minimax:tool_call>"))
