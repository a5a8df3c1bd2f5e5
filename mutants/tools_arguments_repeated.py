"""When the stream ends, each call's whole arguments are sent again in a last delta, so a client that
concatenates them gets the arguments twice."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine

from .base import tool_parsers


class RepeatingStream(engine.TaggedStream):
    def feed(self, text, final=False):
        deltas = super().feed(text, final)
        self.sent = getattr(self, "sent", {})
        for delta in deltas:
            for call in delta.get("tool_calls", ()):
                self.sent[call["index"]] = self.sent.get(call["index"], "") + call["function"].get("arguments", "")
        if final:
            deltas += [{"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}
                       for index, arguments in sorted(self.sent.items()) if arguments]
        return deltas


OutputParser, parse_response, parse_tool_calls = tool_parsers(stream=RepeatingStream)
