"""Whole-text reference for tool calls and reasoning in model output, written for obviousness
rather than speed, independently of impl: every streamed run of impl's OutputParser, however the
text is split, must assemble to what this says about the whole text.

    >>> parse('<think>hm</think>Hi<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', "hermes").message()
    {'content': 'Hi', 'reasoning_content': 'hm', 'calls': [{'name': 'f', 'arguments': {'a': 1}}]}

Rules shared by every format (each format's module says how its calls are written). Where
transformers' response parser can express a rule, it is transformers' (oracles/response_templates),
unless vLLM and llama.cpp both answer otherwise (their own parser tests: corpora/server_parser_tests);
elsewhere the engines' parsers decided, cited where the rule is written.

- Content is every character outside reasoning and markup, verbatim, so messages are compared
  exactly. Whitespace that is markup glues a section tag to its call (``<｜tool▁calls▁begin｜>
  \\n<｜tool▁call▁begin｜>``) and llama3_json's calls to each other; and whitespace alone beside a
  call (a run of it between two calls, between reasoning or the text's start and a call, between a
  call and reasoning or the text's end) is markup too: vLLM and llama.cpp drop it, where
  transformers' templates keep it (``strip: false``); gpt_oss keeps it always (whitespace between
  harmony messages); glm45 also trims whitespace at content's ends beside calls and reasoning (both its
  servers do: ``EDGE_WHITESPACE``). ``transformers_rules`` gives transformers' answer on the rules where
  the servers part from it (blank runs, an opening reasoning tag repeated at the start, hermes' other
  call tags).
- A reasoning block runs from its open tag, wherever it stands in content (after text, after another
  block: transformers opens a region at its tag anywhere, and vLLM's reasoning parsers take the first
  open tag anywhere), to its close tag, or to the end of the text (kimi_k2: to a tool-calls section
  opening tag, where vLLM, SGLang and llama.cpp all end it); blocks add up. ``starts_in_reasoning``
  means the prompt opened one. ``reasoning=False``: reasoning tags are plain content. A close tag with no
  open block is content. Tags inside reasoning (calls, another open tag) are reasoning text.
- A call block runs from its open tag to its first close tag (hermes: the first outside a JSON string,
  its tags being plain text a string may hold; elsewhere close tags are special tokens and the first
  one counts), or to where its JSON ends (mistral, llama3_json), or to the end of the text. It becomes
  calls when its body parses completely, an unterminated block at the end too (transformers and vLLM's
  hermes parser read it), else its whole text is content ("fallback"): invalid JSON, a missing or empty
  name, arguments that are not a JSON object, a stray open tag or text inside it.
- A section tag (deepseek, kimi) is markup only next to a call: an opening one followed (after
  whitespace) by a call, a closing one following (after whitespace) a call; anywhere else it is
  content.
- Names: a JSON string in the JSON-object formats; written as text elsewhere, stripped, non-empty and
  without ``<``. Arguments are compared as JSON values; a call without arguments has ``{}``. A call of
  a tool the request does not list is still a call (impl may flag it; flags are not compared).
- Arguments written as text (qwen3_coder, glm45, minimax_m2) are typed by the tool's schema:
  the JSON value when the text is JSON of a non-string type the parameter allows (for an object or
  array, a Python literal too), else the text; where the schema names no type, the text (glm45: the
  JSON it holds, if any, as both its servers read it).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .tool_reference_core import JSON_WHITESPACE, TagFormat, parse_tagged
from .tool_reference_core import Parsed  # noqa: F401  (re-exported: the reference's answer)
from .tool_reference_harmony import HARMONY_TAGS, ROLE_RECIPIENT, parse_harmony
from .tool_reference_json import (CALL_OBJECT_IN_TEXT, DEEPSEEK_R1, DEEPSEEK_V31, HERMES, KIMI_K2, LLAMA3_TAGS,
                                  MISTRAL, parse_llama3_json)
from .tool_reference_xml import GLM45, MINIMAX_M2, QWEN3_CODER

VERSION = "oracles.tool_reference (whole-text reference)"
TAGGED: dict[str, TagFormat] = {fmt.name: fmt for fmt in (HERMES, QWEN3_CODER, MISTRAL, DEEPSEEK_R1, DEEPSEEK_V31,
                                                           KIMI_K2, GLM45, MINIMAX_M2)}
WHOLE: dict[str, tuple[Callable[..., Parsed], tuple[str, ...]]] = {
    "llama3_json": (parse_llama3_json, LLAMA3_TAGS), "gpt_oss": (parse_harmony, HARMONY_TAGS)}
# The tool-call formats of model output the reference parses, by the names impl.tools gives them.
TOOL_CALL_FORMATS = ("hermes", "qwen3_coder", "llama3_json", "mistral", "deepseek_r1", "deepseek_v31", "gpt_oss",
                     "kimi_k2", "glm45", "minimax_m2")
# Formats whose arguments are the model's own JSON text, so a streamed call can pass it on byte for byte.
JSON_ARGUMENT_FORMATS = frozenset(TOOL_CALL_FORMATS) - {"qwen3_coder", "glm45", "minimax_m2"}
# Characters that may glue a call to the syntax after it, so a stream may hold them after a call until
# the next character says whether they are markup or content.
GLUE = {"deepseek_r1": JSON_WHITESPACE, "deepseek_v31": JSON_WHITESPACE, "kimi_k2": JSON_WHITESPACE,
        "llama3_json": JSON_WHITESPACE + ";"}
# Formats whose whitespace beside calls stays content (harmony: between messages).
KEEPS_BLANK_RUNS = frozenset({"gpt_oss"})
# What may end a call where the format has no close tag (mistral: its JSON; hermes: a bare object), so
# whitespace after it may be held.
CALL_ENDS = {"mistral": ("}", "]"), "hermes": ("}",)}
# Formats where a brace in text opens a call when "name" follows it (hermes' bare object, llama3_json's call
# after text): a stream may hold the brace and what follows it while it may still become that opener.
BRACE_OPENS = frozenset({"hermes", "llama3_json"})
# Characters dropped at the ends of content that touch a call or reasoning (Parsed.trim_edges), by format.
EDGE_WHITESPACE = {"glm45": JSON_WHITESPACE}


def _known(format: str) -> str:
    if format not in TOOL_CALL_FORMATS:
        raise ValueError(f"unknown tool-call format {format!r} (known: {', '.join(TOOL_CALL_FORMATS)})")
    return format


def parse(text: str, format: str, *, tools: list | None = None, reasoning: bool = True,
          starts_in_reasoning: bool = False, transformers_rules: bool = False) -> Parsed:
    """The complete message ``text`` holds in ``format``, as spans of the text and calls.
    ``transformers_rules``: where vLLM and llama.cpp part from transformers, transformers' rule instead:
    whitespace alone beside a call stays content (``Parsed.drop_blank_runs_beside_calls`` undone), an
    opening reasoning tag that repeats the prompt's is reasoning text, hermes' other call tags are text."""
    if _known(format) in TAGGED:
        fmt = TAGGED[format]
        if transformers_rules:
            fmt = dataclasses.replace(fmt, variants=())
        parsed = parse_tagged(fmt, text, tools, reasoning, starts_in_reasoning,
                              repeated_open_is_syntax=not transformers_rules)
    else:
        parsed = WHOLE[format][0](text, tools, reasoning, starts_in_reasoning)
    if transformers_rules or format in KEEPS_BLANK_RUNS:
        return parsed
    parsed.drop_blank_runs_beside_calls()
    return parsed.trim_edges(EDGE_WHITESPACE[format]) if format in EDGE_WHITESPACE else parsed


def tags(format: str, reasoning: bool = True) -> tuple[str, ...]:
    """Every tag of ``format``: while a stream's unreleased tail may begin one, it may be held back."""
    if _known(format) in TAGGED:
        return TAGGED[format].tags(reasoning)
    return WHOLE[format][1]


def held_back(format: str, text: str, reasoning: bool = True) -> int:
    """How much of the end of ``text`` (a stream so far) may be held back: the longest tail that is a
    proper beginning of a tag, after (where the format has glue) a run of glue characters, or after
    whitespace that may be alone beside a call (it follows the start, a tag, or the end of a call); gpt_oss:
    all of a start that may still begin with a recipient (``to=``, the role header going on); a brace that
    may still open a call (``BRACE_OPENS``); kimi_k2: reasoning
    from a section tag on while its block is not closed.

    >>> held_back("hermes", "Hi <tool"), held_back("llama3_json", '{"name": "f"}; '), held_back("hermes", "Hi ")
    (5, 2, 0)
    >>> held_back("hermes", "</tool_call>\\n<tool"), held_back("hermes", "\\n"), held_back("hermes", 'Hi { "na')
    (6, 1, 5)
    """
    if format == "gpt_oss" and ROLE_RECIPIENT.fullmatch(text, partial=True):
        return len(text)  # it may still turn out to begin inside the role header (a recipient)
    fmt = TAGGED.get(format)
    if reasoning and fmt is not None and fmt.reasoning_ends_at_section and text.rfind(fmt.think[1]) <= text.rfind(fmt.think[0]):
        # Reasoning that may still be open (or may have been opened by the prompt): from a section tag in it
        # on, a stream may hold it until the close tag or the end says whether the block ended there.
        opened = max(text.rfind(fmt.think[0]), 0)
        sections = [at for tag in fmt.sections[0] if (at := text.find(tag, opened)) >= 0]
        if sections:
            return len(text) - min(sections)
    every = tags(format, reasoning)
    tag_part = max((n for n in range(1, max(map(len, every), default=0)) if n <= len(text)
                    and any(len(tag) > n and tag.startswith(text[-n:]) for tag in every)), default=0)
    brace = text.rfind("{")
    if format in BRACE_OPENS and brace >= 0 and CALL_OBJECT_IN_TEXT.fullmatch(text, pos=brace, partial=True) \
            and not CALL_OBJECT_IN_TEXT.fullmatch(text, pos=brace):
        tag_part = max(tag_part, len(text) - brace)
    before = text[:len(text) - tag_part]
    glue = GLUE.get(format, "")
    if glue:
        return tag_part + len(before) - len(before.rstrip(glue))
    edge_part = len(before) - len(before.rstrip(EDGE_WHITESPACE.get(format, "")))
    stem = before.rstrip(JSON_WHITESPACE)
    beside_a_call = format not in KEEPS_BLANK_RUNS and (
        not stem or stem.endswith(every) or stem.endswith(CALL_ENDS.get(format, ())))
    return tag_part + max(edge_part, len(before) - len(stem) if beside_a_call else 0)
