"""SGLang's reasoning parser (--reasoning-parser qwen3; BaseReasoningFormatDetector), a request
that opened reasoning (force_reasoning): after the block closed, a later '<think>' in the output
is read differently by the two paths. The whole parse (parse_non_stream) reads one block and keeps
'<think>C' as content; the stream (parse_stream_chunk, one token a chunk) re-enters reasoning at
the later '<think>' and sends 'C' as reasoning. The streamed and non-streamed messages disagree.

Needs: sglang (0.5.23; runs on the CPU, no model). Runs in an empty folder; exits 1 while the bug
is there.

Expected: the same message both ways. Which one is SGLang's to say; the reference, transformers'
response-parser rules as textbound's oracles.tool_reference applies them (transformers 5.24.0),
lets reasoning blocks add up: reasoning 'AC', content 'B' (REFERENCE), the streamed answer.
"""
import logging
import sys

from sglang.srt.parser.reasoning_parser import ReasoningParser

logging.disable(logging.WARNING)
CHUNKS = ["A", "</think>", "B", "<think>", "C"]  # the output after a prompt ending in '<think>'
REFERENCE = ("AC", "B")  # (reasoning, content): oracles.tool_reference, transformers 5.24.0

whole_reasoning, whole_content = ReasoningParser("qwen3", stream_reasoning=True,
                                                 force_reasoning=True).parse_non_stream("".join(CHUNKS))
parser = ReasoningParser("qwen3", stream_reasoning=True, force_reasoning=True)
reasoning, content = "", ""
for chunk in CHUNKS:
    r, c = parser.parse_stream_chunk(chunk)
    reasoning, content = reasoning + (r or ""), content + (c or "")
r, c = parser.parse_stream_end()
streamed = (reasoning + (r or ""), content + (c or ""))
whole = (whole_reasoning or "", whole_content or "")
print("text:", repr("".join(CHUNKS)), "(the prompt opened reasoning)")
print("expected: (reasoning, content) =", whole, "(parse_non_stream; the reference:", REFERENCE, ")")
print("actual:   (reasoning, content) =", streamed, "(streamed)")
sys.exit(1 if streamed != whole else 0)
