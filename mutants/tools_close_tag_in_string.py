"""hermes: the first "</tool_call>" ends the call block, even inside a JSON string (a non-greedy
regex ``<tool_call>(.*?)</tool_call>``)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine, hermes

from .base import tool_parsers


class FirstCloseTag(hermes.Hermes):
    block_end = engine.TaggedFormat.block_end


OutputParser, parse_response, parse_tool_calls = tool_parsers(formats={"hermes": FirstCloseTag})
