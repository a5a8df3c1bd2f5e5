"""Schema-forced tool calls: JSON Schema to a regex (schema.py), a tool call's whole text in a
tool-call format (tool_call.py), and a regex to a token mask over a vocabulary (constraint.py,
through regex_syntax.py and automaton.py)."""
from __future__ import annotations

from .constraint import Constraint
from .regex_text import regex_escape
from .schema import json_schema_to_regex
from .tool_call import tool_call_pattern

__all__ = ["Constraint", "json_schema_to_regex", "regex_escape", "tool_call_pattern"]
