"""Schema-forced tool calls: JSON Schema to a regex (schema.py, with combine.py merging conjunctions and
disjoint.py proving ``oneOf`` branches exclusive), a tool call's whole text in a tool-call format
(tool_call.py), and a regex to a token mask over a vocabulary (constraint.py, through regex_syntax.py
and automaton.py).

``REF_DEPTH`` (3) is the bound on recursion: one ``$ref`` unfolds at most that many times along a
path, past which its branch matches nothing (a recursive tree nests at most 3 levels of the same
definition); ``FREE_DEPTH`` (2) bounds the nesting of free-form values (``{}``, ``true``).
"""
from __future__ import annotations

from .constraint import Constraint
from .regex_text import regex_escape
from .schema import FREE_DEPTH, REF_DEPTH, json_schema_to_regex
from .tool_call import tool_call_pattern

__all__ = ["FREE_DEPTH", "REF_DEPTH", "Constraint", "json_schema_to_regex", "regex_escape", "tool_call_pattern"]
