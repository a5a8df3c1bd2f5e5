"""SGLang's gpt-oss reasoning parser (--reasoning-parser gpt-oss), streaming: when '<|end|>' that
closes the analysis message arrives cut between chunks ('<|en', 'd|>'), the marker's text is
streamed as reasoning: reasoning 'x<|end|>', where the whole parse of the same text has reasoning
'x'. (A gpt-oss tokenizer has '<|end|>' as one token, so a server cuts it only where chunks are
not token-aligned; SGLang's streaming parsers are written to hold such partial markers back.)

Needs: sglang (0.5.23; runs on the CPU, no model). Runs in an empty folder; exits 1 while the bug
is there.

Expected: the parser's own non-streamed answer (parse_non_stream): reasoning 'x', content ''; the
reference, transformers' response-parser rules as textbound's oracles.tool_reference applies them
(transformers 5.24.0), answers the same (REFERENCE).
"""
import logging
import sys

from sglang.srt.parser.reasoning_parser import ReasoningParser

logging.disable(logging.WARNING)
CHUNKS = ["<|channel|>", "analysis", "<|message|>", "x", "<|en", "d|>"]
REFERENCE = ("x", "")  # (reasoning, content): oracles.tool_reference, transformers 5.24.0

whole_reasoning, whole_content = ReasoningParser("gpt-oss", stream_reasoning=True).parse_non_stream("".join(CHUNKS))
parser = ReasoningParser("gpt-oss", stream_reasoning=True)
reasoning, content = "", ""
for chunk in CHUNKS:
    r, c = parser.parse_stream_chunk(chunk)
    reasoning, content = reasoning + (r or ""), content + (c or "")
r, c = parser.parse_stream_end()
streamed = (reasoning + (r or ""), content + (c or ""))
whole = (whole_reasoning or "", whole_content or "")
print("text:", repr("".join(CHUNKS)), "chunks:", CHUNKS)
print("expected: (reasoning, content) =", whole, "(parse_non_stream; the reference:", REFERENCE, ")")
print("actual:   (reasoning, content) =", streamed, "(streamed)")
sys.exit(1 if streamed != whole else 0)
