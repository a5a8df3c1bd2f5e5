"""Whole-text reference for tool calls and reasoning in model output, written for obviousness
rather than speed, independently of impl: every streamed run of impl's OutputParser, however the
text is split, must assemble to what this says about the whole text.

    >>> parse('<think>hm</think>Hi<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', "hermes").message()
    {'content': 'Hi', 'reasoning_content': 'hm', 'calls': [{'name': 'f', 'arguments': {'a': 1}}]}

Rules shared by every format (each format's module says how its calls are written):

- Text outside tags is content, wherever it stands (before, between and after calls); whitespace is
  kept (comparisons strip the ends of content and reasoning, which engines treat differently).
- A reasoning block runs from its open tag (recognised anywhere in content) to its close tag, or to
  the end of the text; ``starts_in_reasoning`` means the prompt opened it. ``reasoning=False``:
  reasoning tags are plain content. A close tag with no open block is content. Calls inside
  reasoning are reasoning text.
- A call block runs from its open tag to the first close tag outside a JSON string (JSON bodies) or
  to the first close tag (text bodies), or to the end of the text. It becomes calls when its body
  parses completely (an unterminated block at the end too), else its whole text is content
  ("fallback"): invalid JSON, a missing or empty name, arguments that are not an object, nested or
  repeated open tags. Section tags around a run of calls are markup next to a call (whitespace
  between them too); away from any call they are kept as content.
- Arguments are compared as JSON values; a call without arguments has ``{}``. A call of a tool the
  request does not list is still a call (impl may flag it; flags are not compared).
- Arguments written as text (qwen3_coder, glm45, minimax_m2) are typed by the tool's schema:
  the JSON value when the text is JSON of a non-string type the parameter allows, else the text.
"""
from __future__ import annotations

from collections.abc import Callable

from .tool_reference_core import TagFormat, parse_tagged
from .tool_reference_core import Parsed  # noqa: F401  (re-exported: the reference's answer)
from .tool_reference_harmony import HARMONY_TAGS, parse_harmony
from .tool_reference_json import (DEEPSEEK_R1, DEEPSEEK_V31, HERMES, KIMI_K2, LLAMA3_TAGS, MISTRAL,
                                  parse_llama3_json)
from .tool_reference_xml import GLM45, MINIMAX_M2, QWEN3_CODER

VERSION = "oracles.tool_reference (whole-text reference)"
TAGGED: dict[str, TagFormat] = {fmt.name: fmt for fmt in (HERMES, QWEN3_CODER, MISTRAL, DEEPSEEK_R1, DEEPSEEK_V31,
                                                           KIMI_K2, GLM45, MINIMAX_M2)}
WHOLE: dict[str, tuple[Callable[..., Parsed], tuple[str, ...]]] = {
    "llama3_json": (parse_llama3_json, LLAMA3_TAGS), "gpt_oss": (parse_harmony, HARMONY_TAGS)}
FORMATS = ("hermes", "qwen3_coder", "llama3_json", "mistral", "deepseek_r1", "deepseek_v31", "gpt_oss", "kimi_k2",
           "glm45", "minimax_m2")
# Formats whose arguments are the model's own JSON text, so a streamed call can pass it on byte for byte.
JSON_ARGUMENT_FORMATS = frozenset(FORMATS) - {"qwen3_coder", "glm45", "minimax_m2"}


def _known(format: str) -> str:
    if format not in FORMATS:
        raise ValueError(f"unknown tool-call format {format!r} (known: {', '.join(FORMATS)})")
    return format


def parse(text: str, format: str, *, tools: list | None = None, reasoning: bool = True,
          starts_in_reasoning: bool = False) -> Parsed:
    """The complete message ``text`` holds in ``format``, as spans of the text and calls."""
    if _known(format) in TAGGED:
        return parse_tagged(TAGGED[format], text, tools, reasoning, starts_in_reasoning)
    return WHOLE[format][0](text, tools, reasoning, starts_in_reasoning)


def tags(format: str, reasoning: bool = True) -> tuple[str, ...]:
    """Every tag of ``format``: while a stream's unreleased tail may begin one, it may be held back."""
    if _known(format) in TAGGED:
        return TAGGED[format].tags(reasoning)
    return WHOLE[format][1]
