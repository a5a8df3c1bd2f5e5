"""An output whose reasoning is never closed is all content: the whole-text reasoning rule of vLLM's
Qwen3 parser (no </think>, no reasoning), which a stop inside the reasoning meets, moving the reasoning
into content (vllm#51641: a stop string misrouting reasoning to content). The streaming parser is impl's."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tools import engine


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
    options = {"tools": tools, "reasoning": reasoning, "starts_in_reasoning": starts_in_reasoning}
    message = impl.parse_response(text, format, **options)
    parser = impl.OutputParser(format, **options)
    parser.feed(text)
    if getattr(parser._stream, "mode", None) in (engine.REASONING, engine.OPENED) and message.get("reasoning_content"):
        message["content"] = message.pop("reasoning_content") + (message.get("content") or "")
    return message
