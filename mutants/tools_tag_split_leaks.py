"""Content is released as it arrives, without holding back a tail that may begin a tag: a tag split
across deltas ("<tool_" + "call>") leaks into the content and the call is never seen."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine

from .base import tool_parsers


class LeakingStream(engine.TaggedStream):
    def _content(self, final):
        more = super()._content(final)
        if not more and self.mode == engine.CONTENT and self.buffer:
            self.sink.content(self.buffer)
            self.buffer = ""
        return more


OutputParser, parse_response, parse_tool_calls = tool_parsers(stream=LeakingStream)
