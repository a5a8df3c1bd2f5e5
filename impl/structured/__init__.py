"""Schema-forced tool calls: JSON Schema to a regex, and a regex to a token mask."""
from __future__ import annotations


def json_schema_to_regex(schema, *, whitespace=None) -> str:
    raise NotImplementedError("json_schema_to_regex")


def regex_escape(s) -> str:
    raise NotImplementedError("regex_escape")


def tool_call_pattern(tools, *, name=None, format="hermes") -> str:
    raise NotImplementedError("tool_call_pattern")


class Constraint:
    def __init__(self, pattern, tokenizer):
        raise NotImplementedError("Constraint")
