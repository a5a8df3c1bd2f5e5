"""llguidance's token masks as an ``--impl`` of the structured component, on impl's schema regexes
(llguidance compiles schemas to grammars, never regexes); see textbound.adapters.structured_adapters.

    textbound check --impl textbound.adapters.llguidance_adapter --component structured

Server entry point: vLLM's ``backend=guidance`` (``LLMatcher``), given impl's regex where vLLM
gives the schema; see textbound.adapters.structured_adapters.
"""
from __future__ import annotations

import functools

from textbound.impl import Tokenizer, json_schema_to_regex, parse_response  # noqa: F401 - see the docstring

from . import engine_version
from .structured_adapters import LlguidanceConstraint as Constraint  # noqa: F401
from .structured_adapters import tool_call_pattern as _tool_call_pattern

__version__ = engine_version("llguidance")
tool_call_pattern = functools.partial(_tool_call_pattern, json_schema_to_regex)
