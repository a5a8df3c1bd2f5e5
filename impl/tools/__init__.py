"""Tool calls and reasoning in generated text, whole and streamed."""
from __future__ import annotations

FORMATS: tuple[str, ...] = ()


class OutputParser:
    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        raise NotImplementedError("OutputParser")

    def feed(self, text, final=False) -> list[dict]:
        raise NotImplementedError("OutputParser.feed")


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False) -> dict:
    raise NotImplementedError("parse_response")


def parse_tool_calls(text, format="hermes"):
    raise NotImplementedError("parse_tool_calls")


def assemble(deltas) -> dict:
    raise NotImplementedError("assemble")


def format_for_template(chat_template):
    raise NotImplementedError("format_for_template")
