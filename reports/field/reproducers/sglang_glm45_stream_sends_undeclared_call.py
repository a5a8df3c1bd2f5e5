"""SGLang's GLM-4.5 tool-call detector (--tool-call-parser glm45), streaming: a call of a function
the request does not declare is streamed as a call (name 'h', arguments '{}'), where the whole
parse of the same text drops it (SGLANG_FORWARD_UNKNOWN_TOOLS off, the default: parse_base_json
logs 'Model attempted to call undefined function' and returns no call). Glm4MoeDetector's
parse_streaming_increment never checks the name against the tools.

Needs: sglang (0.5.23; the function-call parser runs on the CPU, no model). Runs in an empty
folder; exits 1 while the bug is there.

Expected: the parser's own non-streamed answer (parse_non_stream) on the same text: no call. The
reference, transformers' response-parser rules as textbound's oracles.tool_reference applies them
(transformers 5.24.0), reads the call h({}) whatever the tools (REFERENCE); dropping an undeclared
call is SGLang's policy, and its two paths must agree on it.
"""
import logging
import sys

from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser

logging.disable(logging.WARNING)
TOOLS = [Tool.model_validate({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}})]
CHUNKS = ["<tool_call>", "h", "\n", "</tool_call>"]  # one token a chunk, as a server streams them
REFERENCE = {"content": "", "calls": [("h", {})]}  # oracles.tool_reference, transformers 5.24.0

whole_content, whole_calls = FunctionCallParser(TOOLS, "glm45").parse_non_stream("".join(CHUNKS))
parser = FunctionCallParser(TOOLS, "glm45")
streamed = {}
for chunk in CHUNKS:
    _, calls = parser.parse_stream_chunk(chunk)
    for call in calls:
        name, arguments = streamed.get(call.tool_index, (None, ""))
        streamed[call.tool_index] = (call.name or name, arguments + (call.parameters or ""))
_, end_calls = parser.parse_stream_end()

expected = [(call.name, call.parameters) for call in whole_calls]
actual = list(streamed.values())
print("text:    ", repr("".join(CHUNKS)), "tools: ['f']")
print("expected:", expected, "(calls of parse_non_stream; the reference:", REFERENCE, ")")
print("actual:  ", actual, "(calls streamed by parse_stream_chunk)")
sys.exit(1 if actual != expected else 0)
