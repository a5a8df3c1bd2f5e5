"""starts_in_reasoning ignored: an output whose <think> the prompt already opened (the template ends
its generation prompt with it) is parsed as if it began outside reasoning, so the reasoning before
</think> lands in content."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class OutputParser(impl.OutputParser):
    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        super().__init__(format, tools=tools, reasoning=reasoning, starts_in_reasoning=False)


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
    return impl.parse_response(text, format, tools=tools, reasoning=reasoning, starts_in_reasoning=False)
