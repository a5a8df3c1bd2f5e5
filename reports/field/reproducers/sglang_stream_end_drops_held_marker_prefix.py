"""SGLang's tool-call detectors for GLM-4.5 (--tool-call-parser glm45), Mistral (mistral) and
Kimi K2 (kimi_k2), streaming: an output that ends with text that could begin the call marker
('<' of '<tool_call>', '[' of '[TOOL_CALLS]', '<|' of '<|tool_calls_section_begin|>') loses that
text. parse_streaming_increment holds it back waiting for the rest of the marker, and
parse_stream_end (which serving_chat calls with the finishing chunk) releases nothing: these
detectors do not override BaseFormatDetector.finish(), a no-op. The whole parse keeps it.

Needs: sglang (0.5.23; the function-call parser runs on the CPU, no model). Runs in an empty
folder; exits 1 while the bug is there.

Expected: the parser's own non-streamed answer (parse_non_stream) on the same text, which is also
the reference's: transformers' response-parser rules as textbound's oracles.tool_reference applies
them (transformers 5.24.0) read each text as plain content (REFERENCE).
"""
import logging
import sys

from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser

logging.disable(logging.WARNING)
TOOLS = [Tool.model_validate({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}})]
# (--tool-call-parser, the model's whole output, streamed as one chunk)
CASES = [("glm45", "\n<"), ("glm45", "a <"), ("mistral", "}["), ("kimi_k2", "<|")]
REFERENCE = {text: text for _, text in CASES}  # content, no calls: oracles.tool_reference, transformers 5.24.0

failed = False
for parser_name, text in CASES:
    whole_content, whole_calls = FunctionCallParser(TOOLS, parser_name).parse_non_stream(text)
    parser = FunctionCallParser(TOOLS, parser_name)
    content, calls = parser.parse_stream_chunk(text)
    end_content, end_calls = parser.parse_stream_end()
    streamed = content + end_content
    print(f"{parser_name} on {text!r}")
    print("  expected:", repr(whole_content), "(parse_non_stream; the reference:", repr(REFERENCE[text]), ")")
    print("  actual:  ", repr(streamed), "(parse_stream_chunk, then parse_stream_end)")
    failed |= streamed != whole_content
sys.exit(1 if failed else 0)
