"""Component checks and the case builders beside them.

``registry`` is the leaf that holds them; each component module registers its checks there when it
is imported, and this package imports every one of them by name.

Imports ``plan``, ``naming``, ``families``, ``server`` and ``adapters`` (and impl, the oracles and the
properties' generators); never ``run``, ``records``, ``shrinking`` or ``triage``.
"""
from . import (chat, chat_cases, detokenizer, server_cases, server_output, server_shapes, stops, stream_cases,
               structured, structured_cases, tokenizer, tokenizer_cases, tools, tools_cases)
from . import shapes, shapes_cases  # after the components: their properties list after each component's own
from .registry import (CASE_BUILDERS, CHECK_SOURCES, CHECKS, FAMILY_INDEPENDENT, MINIMIZED_FIELD, Subject,
                       UnknownCheck, UnknownProperty, case_source, cases, check, checked_components, ids_divergence,
                       impl_call, impl_outcome, missing_oracles, oracle_call, properties, run_check,
                       selected_properties, server_error, text_divergence)

__all__ = [
    "CASE_BUILDERS", "CHECK_SOURCES", "CHECKS", "FAMILY_INDEPENDENT", "MINIMIZED_FIELD", "Subject", "UnknownCheck",
    "UnknownProperty", "case_source", "cases", "check", "checked_components", "chat", "chat_cases", "detokenizer",
    "ids_divergence", "impl_call", "impl_outcome", "missing_oracles", "oracle_call", "properties", "run_check",
    "selected_properties", "server_cases", "server_error", "server_output", "server_shapes", "shapes", "shapes_cases",
    "stops", "stream_cases", "structured", "structured_cases", "text_divergence", "tokenizer", "tokenizer_cases",
    "tools", "tools_cases",
]
