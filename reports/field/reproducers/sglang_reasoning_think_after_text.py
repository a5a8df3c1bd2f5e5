"""SGLang's reasoning parser (--reasoning-parser qwen3; the logic is BaseReasoningFormatDetector's,
shared by deepseek-r1, glm45, kimi and others), a request that did not open reasoning
(force_reasoning off) and an output with text before its <think>:

- whole (parse_non_stream): 'a<think>b' is all reasoning, the tag included: reasoning
  'a<think>b', content ''. _detect_and_parse_impl enters reasoning when '<think>' is anywhere in the
  text but strips it only at the start.
- streamed with the tag cut between chunks ('a<thi', 'nk>b'): all content, the tag included:
  content 'a<think>b'. The streaming path holds a chunk back only when the whole buffer is a prefix
  of '<think>', so 'a<thi' goes out as content.

Needs: sglang (0.5.23; runs on the CPU, no model). Runs in an empty folder; exits 1 while the bug
is there.

Expected (REFERENCE): content 'a', reasoning 'b' — transformers' response-parser rules as
textbound's oracles.tool_reference applies them (transformers 5.24.0): a reasoning block opens at
its tag wherever it stands. The stream of the same text in single characters gives exactly that
(content 'a', reasoning 'b'), so the two answers above are also SGLang's paths disagreeing.
"""
import logging
import sys

from sglang.srt.parser.reasoning_parser import ReasoningParser

logging.disable(logging.WARNING)
TEXT = "a<think>b"
REFERENCE = ("b", "a")  # (reasoning, content): oracles.tool_reference, transformers 5.24.0


def streamed(chunks):
    parser = ReasoningParser("qwen3", stream_reasoning=True, force_reasoning=None)
    reasoning, content = "", ""
    for chunk in chunks:
        r, c = parser.parse_stream_chunk(chunk)
        reasoning, content = reasoning + (r or ""), content + (c or "")
    r, c = parser.parse_stream_end()
    return reasoning + (r or ""), content + (c or "")


whole_reasoning, whole_content = ReasoningParser("qwen3", stream_reasoning=True, force_reasoning=None).parse_non_stream(TEXT)
answers = {"parse_non_stream": (whole_reasoning or "", whole_content or ""),
           "streamed as 'a<thi', 'nk>b'": streamed(["a<thi", "nk>b"]),
           "streamed one character a chunk": streamed(list(TEXT))}
print("text:", repr(TEXT), "(the request did not open reasoning)")
print("expected:   (reasoning, content) =", REFERENCE, "(the reference)")
for how, answer in answers.items():
    print(f"actual:     (reasoning, content) = {answer} ({how})")
sys.exit(1 if any(answer != REFERENCE for answer in answers.values()) else 0)
