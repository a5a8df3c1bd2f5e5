"""vLLM's DeepSeek V3 tool parser (--tool-call-parser deepseek_v3, also the one DeepSeek R1 servers
run), streaming: when the calls block is not closed (no <｜tool▁calls▁end｜>; the output ends after
the last <｜tool▁call▁end｜>), the text after the last call is streamed as content ("\\n"), where the
whole parse of the same text drops it (content None): the streamed and non-streamed messages
disagree.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with the format's markers as special tokens to a temporary folder); exits 1
while the bug is there.

The reference: the parser's own non-streamed answer (extract_tool_calls) on the same text: no
content and one call h({"a": 3}). The reference, transformers' response-parser rules as
textbound's oracles.tool_reference applies them (transformers 5.24.0), answers the same (REFERENCE). A stream must add up to the message the same request gets without `stream`.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.deepseekv3_tool_parser import DeepSeekV3ToolParser

MARKERS = ("<｜end▁of▁sentence｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
           "<｜tool▁call▁end｜>", "<｜tool▁sep｜>")
folder = Path(tempfile.mkdtemp())
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False) for m in MARKERS])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<｜end▁of▁sentence｜>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))
tools = [{"type": "function", "function": {"name": "h", "parameters": {"type": "object", "properties": {}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")

# The model's output as a server streams it, one token a delta; the last: the end-of-turn token,
# which decodes to nothing.
deltas = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "h", "\n```json\n",
          '{"a": 3}', "\n```", "<｜tool▁call▁end｜>", "\n", ""]
whole = DeepSeekV3ToolParser(tokenizer, request.tools).extract_tool_calls("".join(deltas), request)

parser = DeepSeekV3ToolParser(tokenizer, request.tools)
streamed, names, previous_text, previous_ids = "", [], "", []
for delta in deltas:
    delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
    message = parser.extract_tool_calls_streaming(previous_text, previous_text + delta, delta, previous_ids,
                                                  previous_ids + delta_ids, delta_ids, request)
    if message is not None:
        streamed += message.content or ""
        names += [call.function.name for call in message.tool_calls or [] if call.function and call.function.name]
    previous_text, previous_ids = previous_text + delta, previous_ids + delta_ids

REFERENCE = {"content": "", "calls": [("h", {"a": 3})]}  # oracles.tool_reference, transformers 5.24.0
expected = whole.content or ""  # None: no content
print("expected:", repr(expected), "(the whole parse; calls:", [(c.function.name, c.function.arguments) for c in whole.tool_calls], ")")
print("actual:  ", repr(streamed), "(streamed content; calls:", names, ")")
print("(the reference:", REFERENCE, ")")
sys.exit(1 if streamed != expected else 0)
