"""impl: a pure-Python text boundary for LLM inference, matching Hugging Face exactly.

Public names (a contract: the harness and users reach impl only through these):
- tokenizer: Tokenizer, TokenizerFileError
- detokenizer, stops: IncrementalDetokenizer, StopChecker
- chat: render_chat, CHATML_TEMPLATE (and Tokenizer.apply_chat_template); ChatRenderer, RenderLimits and
  RenderLimitError for renders under limits other than the defaults
- tools: OutputParser, parse_response, parse_tool_calls, assemble, FORMATS, format_for_template
- structured: json_schema_to_regex, regex_escape, tool_call_pattern, Constraint
"""
from .chat import CHATML_TEMPLATE, ChatRenderer, RenderLimitError, RenderLimits, render_chat
from .errors import TokenizerFileError
from .streaming import IncrementalDetokenizer, StopChecker
from .structured import Constraint, json_schema_to_regex, regex_escape, tool_call_pattern
from .tokenizer import Tokenizer
from .tools import FORMATS, OutputParser, assemble, format_for_template, parse_response, parse_tool_calls

__version__ = "0.1.0"
__all__ = [
    "CHATML_TEMPLATE", "ChatRenderer", "Constraint", "FORMATS", "IncrementalDetokenizer", "OutputParser",
    "RenderLimitError", "RenderLimits", "StopChecker", "Tokenizer", "TokenizerFileError", "assemble",
    "format_for_template", "json_schema_to_regex", "parse_response", "parse_tool_calls", "regex_escape",
    "render_chat", "tool_call_pattern",
]
