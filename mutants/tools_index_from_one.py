"""Streamed tool calls are numbered from 1: the first call's deltas carry "index": 1."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import tool_parsers


def renumbered(deltas):
    return [{**delta, "tool_calls": [{**call, "index": call["index"] + 1} for call in delta["tool_calls"]]}
            if "tool_calls" in delta else delta for delta in deltas]


OutputParser, parse_response, parse_tool_calls = tool_parsers(deltas=renumbered)
