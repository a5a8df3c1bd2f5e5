"""The whole text of one forced tool call, in a tool-call format, as a regex.

Formats (the text each one's vLLM parser reads as a call):
- ``hermes`` (Qwen, Hermes): ``<tool_call>\\n{"name": "f", "arguments": {...}}\\n</tool_call>``
- ``llama3_json`` (Llama 3.1/3.2 JSON tool calling): ``{"name": "f", "parameters": {...}}``
- ``mistral``: ``[TOOL_CALLS][{"name": "f", "arguments": {...}}]``. On Mistral vocabularies
  ``[TOOL_CALLS]`` is a special token: Constraint lets it stand for that text at the start (its
  content begins every match), so the model may write the prefix as it was trained to.

The arguments follow the tool's ``parameters`` schema (json_schema_to_regex, default whitespace).
Example: ``tool_call_pattern([{"type": "function", "function": {"name": "ping", "parameters":
{"type": "object", "properties": {}}}}], format="llama3_json")`` matches ``{"name": "ping",
"parameters": {}}`` and ``{"name":"ping","parameters":{}}``.
"""
from __future__ import annotations

from .regex_text import group, regex_escape
from .schema import Punctuation, json_schema_to_regex, json_string_literal

# format -> (text before the call object, key of the arguments, text after it)
FORMATS: dict[str, tuple[str, str, str]] = {
    "hermes": ("<tool_call>\n", "arguments", "\n</tool_call>"),
    "llama3_json": ("", "parameters", ""),
    "mistral": ("[TOOL_CALLS][", "arguments", "]"),
}
_NO_PARAMETERS = {"type": "object", "properties": {}}


def tool_call_pattern(tools, *, name: str | None = None, format: str = "hermes") -> str:
    """A regex for one call of one of ``tools`` (OpenAI format), or of the tool ``name`` when given.

    >>> tool_call_pattern([{"type": "function", "function": {"name": "f", "parameters": {
    ...     "type": "object", "properties": {}, "additionalProperties": False}}}])
    '<tool_call>\\\\n(?:\\\\{"name":[ ]?"f",[ ]?"arguments":[ ]?(?:\\\\{\\\\})\\\\})\\\\n</tool_call>'
    """
    if format not in FORMATS:
        raise ValueError(f"unknown tool-call format {format!r}; known: {sorted(FORMATS)}")
    functions = called_functions(tools, name)
    before, arguments_key, after = FORMATS[format]
    punctuation = Punctuation(None)
    calls = []
    for function in functions:
        parameters = function.get("parameters")
        arguments = json_schema_to_regex(_NO_PARAMETERS if parameters is None else parameters)
        calls.append(punctuation.object(punctuation.comma.join([
            f"{json_string_literal('name')}{punctuation.colon}{json_string_literal(function['name'])}",
            f"{json_string_literal(arguments_key)}{punctuation.colon}{arguments}"])))
    return regex_escape(before) + group(calls) + regex_escape(after)


def called_functions(tools, name: str | None = None) -> list[dict]:
    """The functions of ``tools`` (OpenAI format or bare) a call may name: all, or the one ``name``;
    ValueError when there are none or ``name`` is unknown.

    >>> called_functions([{"type": "function", "function": {"name": "f"}}, {"name": "g"}], "g")
    [{'name': 'g'}]
    """
    functions = [_function_of(tool, index) for index, tool in enumerate(tools or [])]
    if not functions:
        raise ValueError("tool_call_pattern needs at least one tool")
    if name is None:
        return functions
    known = [function["name"] for function in functions]
    if name not in known:
        raise ValueError(f"unknown tool {name!r}; known tools: {known}")
    return [function for function in functions if function["name"] == name]


def _function_of(tool, index: int) -> dict:
    """The function of an OpenAI tool (``{"type": "function", "function": {...}}``) or a bare function."""
    function = tool.get("function", tool) if isinstance(tool, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ValueError(f"tools[{index}]: expected {{'type': 'function', 'function': {{'name': ..., "
                         f"'parameters': ...}}}}")
    return function
