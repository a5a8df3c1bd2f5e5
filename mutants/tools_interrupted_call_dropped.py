"""A call block the end of the stream interrupts (a stop string, max_tokens) is dropped when it cannot
be read as a call, where its text is content: vllm#42210 (streaming drops the partial content when a
stop string interrupts auto tool parsing). The whole-text parse is impl's."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine

from .base import tool_parsers


class DroppingStream(engine.TaggedStream):
    def _block(self, final):
        if final:
            end = self.format.block_end(self.opener, self.buffer, final, dict(self.block_memo))
            interrupted = end not in (None, engine.REJECT) and end[1] == len(self.buffer) and not (
                self.format.close_tag and self.buffer.endswith(self.format.close_tag))
            if interrupted and self.format.parse_block(self.opener, self.buffer, self.parameters) is None:
                self.block_calls.finish(None)
                self.buffer, self.mode = "", engine.CONTENT
                return True
        return super()._block(final)


OutputParser, _, _ = tool_parsers(stream=DroppingStream)
