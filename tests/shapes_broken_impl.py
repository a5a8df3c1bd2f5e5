"""impl with a parser wrong on every other instance it makes (the first, the third, ...): state one
request leaves for the next, as a parser object reused across requests does. A parser in the server's
pipeline then answers otherwise than a new one fed the same pieces: only tools/pipeline and
*/interleaved can see it."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class OutputParser(impl.OutputParser):
    made = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        OutputParser.made += 1
        self.broken = OutputParser.made % 2 == 1

    def feed(self, text, final=False):
        found = super().feed(text, final)
        return [delta for delta in found if "reasoning_content" not in delta] if self.broken else found
