"""transformers' response parser (``transformers.utils.chat_parsing``) as the tools oracle, driven by
the response templates in ``oracles/response_templates/`` (one JSON file per format it can express:
``format``, ``limits`` — what it cannot express, named so a disagreement has a reason —, maybe
``applies_when`` — a regex on the text choosing between a format's forms, or saying which outputs
the template can express —, maybe ``answers_without_reasoning: false`` — the template has no way to
read the output when reasoning is off — and ``response_template``).

It parses the whole text (``parse_response``): a stream of impl's must assemble to that answer too
(split invariance), and transformers' own streaming has limits of its own (the templates' "streamed,
..." entries) that say nothing about the text. It answers in oracles.tool_reference's message shape,
or says why it has no answer:

    >>> parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>', "hermes").message
    {'content': '', 'reasoning_content': '', 'calls': [{'name': 'f', 'arguments': {}}]}
    >>> parse('{"name": "f"}', "llama3_json").reason
    'transformers cannot express llama3_json'
"""
from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import regex

TEMPLATES_DIR = Path(__file__).parent / "response_templates"
VERSION = f"transformers {version('transformers')} response parser"
THINKING, CONTENT, TOOL_CALLS = "thinking", "content", "tool_calls"


@dataclass(frozen=True)
class ResponseTemplate:
    name: str  # the file's stem
    format: str
    limits: tuple[str, ...]
    applies_when: str | None
    reasoning_prefix: str | None
    answers_without_reasoning: bool
    template: dict

    def applies_to(self, text: str) -> bool:
        return self.applies_when is None or regex.search(self.applies_when, text) is not None

    def for_request(self, reasoning: bool, starts_in_reasoning: bool) -> tuple[dict, str]:
        """(the template, the prefix the prompt ended with) for a request's reasoning flags."""
        template = copy.deepcopy(self.template)
        thinking = template["fields"].get(THINKING)
        if not reasoning:
            template["fields"].pop(THINKING, None)
            return template, ""
        opening = self.reasoning_prefix or (thinking or {}).get("open", "")
        return template, opening if starts_in_reasoning else ""


@functools.cache
def response_templates() -> dict[str, tuple[ResponseTemplate, ...]]:
    """Format -> its templates, those with ``applies_when`` first."""
    found: dict[str, list[ResponseTemplate]] = {}
    for path in sorted(TEMPLATES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.setdefault(data["format"], []).append(ResponseTemplate(
            path.stem, data["format"], tuple(data.get("limits", ())), data.get("applies_when"),
            data.get("reasoning_prefix"), data.get("answers_without_reasoning", True), data["response_template"]))
    return {fmt: tuple(sorted(items, key=lambda t: t.applies_when is None)) for fmt, items in found.items()}


def template_for(format: str, text: str) -> ResponseTemplate | None:
    return next((t for t in response_templates().get(format, ()) if t.applies_to(text)), None)


@dataclass(frozen=True)
class TransformersAnswer:
    message: dict | None  # the tool_reference message shape, or None when there is no answer
    reason: str | None    # why there is none
    template: str | None = None
    limits: tuple[str, ...] = ()


def _message(parsed: dict) -> dict:
    calls = []
    for call in parsed.get(TOOL_CALLS) or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append({"name": function.get("name"), "arguments": function.get("arguments", {})})
    return {"content": parsed.get(CONTENT) or "", "reasoning_content": parsed.get(THINKING) or "", "calls": calls}


def parse(text: str, format: str, *, tools: list | None = None, reasoning: bool = True,
          starts_in_reasoning: bool = False) -> TransformersAnswer:
    """transformers' message for the whole ``text``."""
    from transformers.utils.chat_parsing import parse_response

    found = template_for(format, text)
    if found is None:
        return TransformersAnswer(None, f"transformers cannot express {format}")
    if not reasoning and not found.answers_without_reasoning:
        return TransformersAnswer(None, f"transformers cannot express {format} with reasoning off", found.name, found.limits)
    template, prefix = found.for_request(reasoning, starts_in_reasoning)
    try:
        parsed = parse_response(text, template, prefix=prefix, tools=tools)
    except Exception as exc:  # the parser raises on what its template cannot parse (invalid JSON, ...)
        return TransformersAnswer(None, f"transformers raised {type(exc).__name__}", found.name, found.limits)
    return TransformersAnswer(_message(parsed), None, found.name, found.limits)
