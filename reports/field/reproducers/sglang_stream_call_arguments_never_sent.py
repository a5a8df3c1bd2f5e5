"""SGLang's tool-call detectors for Kimi K2 (--tool-call-parser kimi_k2) and Llama 3
(--tool-call-parser llama3), streaming: a call's name is streamed before its arguments exist, and
when the output ends without them the stream has announced a call whose arguments stay '' (not
JSON text), where the whole parse of the same text has no call (the text stays content) or a call
with arguments '{}':

- kimi_k2, '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>' (the output ends
  before the arguments, as at max_tokens): streamed call f with arguments ''; the whole parse: no
  call, the text is content.
- llama3, '<|python_tag|>{"name": "f"' (an unfinished object): streamed call f with arguments '';
  the whole parse: no call, content '{"name": "f"'.
- llama3, '{"name": "f"}' (a complete call without "arguments"/"parameters"): streamed call f with
  arguments ''; the whole parse: call f with arguments '{}'.

Needs: sglang (0.5.23; the function-call parser runs on the CPU, no model). Runs in an empty
folder; exits 1 while the bug is there.

Expected: the parser's own non-streamed answer (parse_non_stream) on the same text. The reference,
transformers' response-parser rules as textbound's oracles.tool_reference applies them
(transformers 5.24.0), answers the same calls (REFERENCE: for the two unfinished outputs no call,
all of the text content; for the complete one f({})).
"""
import logging
import sys

from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser

logging.disable(logging.WARNING)
TOOLS = [Tool.model_validate({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}})]
# (--tool-call-parser, the output in the chunks a server streams, the reference's calls)
CASES = [
    ("kimi_k2", ["<|tool_call_begin|>", "functions.f:0", "<|tool_call_argument_begin|>"], []),
    ("llama3", ["<|python_tag|>", '{"name": "f"'], []),
    ("llama3", ['{"name": "f"}'], [("f", {})]),
]  # the reference's calls: oracles.tool_reference, transformers 5.24.0


def add(streamed: dict, calls) -> None:
    """Streamed call items joined per call index: (name, the arguments text sent)."""
    for call in calls:
        name, arguments = streamed.get(call.tool_index, (None, ""))
        streamed[call.tool_index] = (call.name or name, arguments + (call.parameters or ""))


failed = False
for parser_name, chunks, reference in CASES:
    whole_content, whole_calls = FunctionCallParser(TOOLS, parser_name).parse_non_stream("".join(chunks))
    parser = FunctionCallParser(TOOLS, parser_name)
    streamed = {}
    for chunk in chunks:
        add(streamed, parser.parse_stream_chunk(chunk)[1])
    add(streamed, parser.parse_stream_end()[1])
    expected = [(call.name, call.parameters) for call in whole_calls]
    actual = list(streamed.values())
    print(f"{parser_name} on {''.join(chunks)!r}")
    print("  expected:", expected, "(calls of parse_non_stream; content", repr(whole_content), "; the reference's calls:", reference, ")")
    print("  actual:  ", actual, "(calls streamed, with parse_stream_end)")
    failed |= actual != expected
sys.exit(1 if failed else 0)
