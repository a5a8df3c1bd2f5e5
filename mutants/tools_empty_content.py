"""A message of tool calls alone has content "" instead of None (OpenAI's API sends null)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import tool_parsers

OutputParser, parse_response, parse_tool_calls = tool_parsers(
    message=lambda message: {**message, "content": message["content"] or ""})
