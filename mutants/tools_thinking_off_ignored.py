"""The output is parsed as if the prompt had opened <think>, whether or not it did: after a prompt
rendered with enable_thinking false (its think block closed and empty), the whole answer, calls
included, lands in reasoning."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class OutputParser(impl.OutputParser):
    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        super().__init__(format, tools=tools, reasoning=reasoning, starts_in_reasoning=reasoning)


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
    return impl.parse_response(text, format, tools=tools, reasoning=reasoning, starts_in_reasoning=reasoning)
