"""Deliberately broken tool-call parsers, one bug each, to show that every tools check fires.

Each variant is a module of its own, ``tests.broken_tools_impl.<variant>``, exposing impl's public
names with one of them broken, so it is reached exactly as an ``--impl`` module is:

    Implementation("tests.broken_tools_impl.index_from_one").OutputParser("hermes")  # indexes from 1

- leaky_tags: a delta ending in the beginning of ``<tool_call>`` is also sent as content;
- close_in_string: hermes calls end at the first ``</tool_call>``, even inside a JSON string;
- index_from_one: tool-call indexes start at 1;
- name_repeated: every later delta of a call repeats its name;
- fixed_hold_back: content is held back 16 characters at a time, tag or not;
- phantom_flagged_call: the whole parse adds a call flagged malformed whose block is nowhere in the content;
- empty_content: a message of tool calls alone has content "" instead of null;
- reasoning_dropped: the whole parse never returns reasoning.
"""
from __future__ import annotations

import json
import sys
from types import ModuleType

import regex

from textbound import impl
import textbound.impl.tools

TOOL_CALL = "<tool_call>"
FIXED_HOLD_BACK = 16


class _Wrapped:
    """impl's OutputParser with ``deltas`` rewriting what each feed returns."""

    def __init__(self, format: str = "hermes", **options):
        self.format, self.parser = format, impl.OutputParser(format, **options)

    def feed(self, text: str, final: bool = False) -> list[dict]:
        return self.deltas(text, self.parser.feed(text, final=final), final)

    def deltas(self, text: str, deltas: list[dict], final: bool) -> list[dict]:
        return deltas


class LeakyTags(_Wrapped):
    def deltas(self, text, deltas, final):
        leaked = [{"content": text[-n:]} for n in range(len(TOOL_CALL) - 1, 0, -1) if text.endswith(TOOL_CALL[:n])]
        return deltas + leaked[:1]


class IndexFromOne(_Wrapped):
    def deltas(self, text, deltas, final):
        for delta in deltas:
            for call in delta.get("tool_calls") or []:
                call["index"] += 1
        return deltas


class NameRepeated(_Wrapped):
    names: dict[int, str]

    def deltas(self, text, deltas, final):
        self.names = getattr(self, "names", {})
        for delta in deltas:
            for call in delta.get("tool_calls") or []:
                function = call.setdefault("function", {})
                if call["index"] in self.names:
                    function["name"] = self.names[call["index"]]
                elif function.get("name"):
                    self.names[call["index"]] = function["name"]
        return deltas


class FixedHoldBack(_Wrapped):
    held = ""

    def deltas(self, text, deltas, final):
        out = []
        for delta in deltas:
            if "content" in delta and delta["content"]:
                self.held += delta.pop("content")
            if delta:
                out.append(delta)
        release = self.held if final else self.held[:-FIXED_HOLD_BACK]
        self.held = self.held[len(release):]
        return out + ([{"content": release}] if release else [])


NAIVE_HERMES_CALL = regex.compile(r"<tool_call>(.*?)</tool_call>", regex.DOTALL)


def naive_hermes_parse_response(text: str, format: str = "hermes", **options) -> dict:
    """Hermes calls cut at the first ``</tool_call>``, wherever it stands; no reasoning (other formats: impl's)."""
    if format != "hermes":
        return impl.parse_response(text, format, **options)
    calls, content, position = [], "", 0
    for match in NAIVE_HERMES_CALL.finditer(text):
        content += text[position:match.start()]
        position = match.end()
        try:
            call = json.loads(match[1])
            calls.append({"id": f"call_{len(calls)}", "type": "function", "function": {
                "name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}})
        except (ValueError, KeyError, TypeError):
            content += match[0]
    return {"role": "assistant", "content": content + text[position:], "reasoning_content": None, "tool_calls": calls}


def phantom_flagged_parse_response(text: str, format: str = "hermes", **options) -> dict:
    message = impl.parse_response(text, format, **options)
    phantom = {"id": "call_99", "type": "function", "function": {"name": "ghost", "arguments": "{}"},
               "error": f"{impl.tools.MALFORMED_CALL}: its block is content"}
    return {**message, "tool_calls": [*message.get("tool_calls", []), phantom]}


def empty_content_parse_response(text: str, format: str = "hermes", **options) -> dict:
    message = impl.parse_response(text, format, **options)
    return {**message, "content": message["content"] or ""}


def reasoning_dropped_parse_response(text: str, format: str = "hermes", **options) -> dict:
    return {**impl.parse_response(text, format, **options), "reasoning_content": None}


def _variant(name: str, **broken) -> ModuleType:
    module = ModuleType(f"{__name__}.{name}", f"impl with one tool-call bug: {name}")
    for public in impl.__all__:
        setattr(module, public, getattr(impl, public))
    module.__version__ = f"broken-tools-{name}"
    for attribute, value in broken.items():
        setattr(module, attribute, value)
    sys.modules[module.__name__] = module
    return module


VARIANTS = {
    "leaky_tags": _variant("leaky_tags", OutputParser=LeakyTags),
    "close_in_string": _variant("close_in_string", parse_response=naive_hermes_parse_response),
    "index_from_one": _variant("index_from_one", OutputParser=IndexFromOne),
    "name_repeated": _variant("name_repeated", OutputParser=NameRepeated),
    "fixed_hold_back": _variant("fixed_hold_back", OutputParser=FixedHoldBack),
    "phantom_flagged_call": _variant("phantom_flagged_call", parse_response=phantom_flagged_parse_response),
    "empty_content": _variant("empty_content", parse_response=empty_content_parse_response),
    "reasoning_dropped": _variant("reasoning_dropped", parse_response=reasoning_dropped_parse_response),
}
