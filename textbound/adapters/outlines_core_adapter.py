"""outlines-core (schema regexes and token masks) as an ``--impl`` of the structured component;
see textbound.adapters.structured_adapters.

    textbound check --impl textbound.adapters.outlines_core_adapter --component structured

Server entry point: vLLM's ``backend=outlines`` (``build_regex_from_schema``, ``Index``); see
textbound.adapters.structured_adapters.
"""
from __future__ import annotations

import functools
import json

from textbound.impl import Tokenizer, parse_response  # noqa: F401 - the vocabulary's bytes, and the calls' reader

from . import engine_version
from .structured_adapters import OutlinesConstraint as Constraint  # noqa: F401
from .structured_adapters import tool_call_pattern as _tool_call_pattern

from outlines_core.json_schema import build_regex_from_schema  # noqa: E402 - after the check it is installed

__version__ = engine_version("outlines-core")


def json_schema_to_regex(schema) -> str:
    """outlines-core's regex for ``schema``, with its default whitespace."""
    return build_regex_from_schema(json.dumps(schema))


tool_call_pattern = functools.partial(_tool_call_pattern, json_schema_to_regex)
