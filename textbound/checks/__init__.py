"""Component checks and the case builders beside them.

``registry`` is the leaf that holds them; each component module registers its checks there when it
is imported, and this package imports every one of them by name.
"""
from . import (chat, chat_cases, detokenizer, stops, stream_cases, structured, structured_cases, tokenizer,
               tokenizer_cases, tools, tools_cases)
from .registry import (CASE_BUILDERS, CHECKS, MINIMIZED_FIELD, Subject, case_source, cases, check,
                       checked_components, ids_divergence, impl_call, oracle_call, run_check, text_divergence)

__all__ = [
    "CASE_BUILDERS", "CHECKS", "MINIMIZED_FIELD", "Subject", "case_source", "cases", "check", "checked_components",
    "chat", "chat_cases", "detokenizer", "ids_divergence", "impl_call", "oracle_call", "run_check", "stops", "stream_cases",
    "structured", "structured_cases", "text_divergence", "tokenizer", "tokenizer_cases", "tools", "tools_cases",
]
