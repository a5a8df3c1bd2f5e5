"""What the Python engines' adapters (vLLM's, SGLang's) are asked alike: one hermes call with
reasoning, read whole and streamed in 5-character deltas, gives the same message; a family's text
encodes to tokenizers' ids and decodes back."""
from __future__ import annotations

import json

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
HERMES_CALL = '<think>hm</think>Hi<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def assert_reads_a_hermes_call_whole_and_streamed(adapter) -> None:
    whole = adapter.parse_response(HERMES_CALL, "hermes", tools=WEATHER)
    parser = adapter.OutputParser("hermes", tools=WEATHER)
    deltas = [d for start in range(0, len(HERMES_CALL), 5) for d in parser.feed(HERMES_CALL[start:start + 5])]
    streamed = adapter.assemble(deltas + parser.feed("", final=True))
    for message in (whole, streamed):
        assert (message["content"], message["reasoning_content"]) == ("Hi", "hm")
        assert [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]] == [{"city": "Paris"}]


def assert_encodes_and_decodes_as_tokenizers(adapter) -> None:
    import tokenizers
    from textbound.families import build_family
    family = build_family("qwen")
    oracle = tokenizers.Tokenizer.from_file(str(family / "tokenizer.json"))
    tokenizer = adapter.Tokenizer.from_dir(family)
    text = "Hi there, 12 €"
    assert tokenizer.encode(text, add_special_tokens=False) == oracle.encode(text, add_special_tokens=False).ids
    assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text
