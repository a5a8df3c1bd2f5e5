"""A call whose opening and closing tags arrive in one delta is dropped: streaming parsers that act on
a tag only when a delta brings it alone (several tokens a delta, as speculative decoding, MTP and
stream_interval send them): vllm#15177, #55082. The whole-text parse is impl's."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine


class OutputParser(impl.OutputParser):
    def feed(self, text, final=False):
        found = super().feed(text, final)
        fmt = getattr(self._stream, "format", None)
        if final or not isinstance(fmt, engine.TaggedFormat) or not fmt.close_tag:
            return found
        if fmt.close_tag in text and any(tag in text for tag in fmt.call_tags):
            return [delta for delta in found if "tool_calls" not in delta]
        return found
