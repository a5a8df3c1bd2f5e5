"""vLLM's Qwen3-Coder tool parser (--tool-call-parser qwen3_coder), streaming: whitespace between the
content and a call stays in the streamed content ("i "), where the whole parse of the same text
strips it ("i"): the streamed and non-streamed messages disagree.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with the format's markers as special tokens to a temporary folder); exits 1
while the bug is there.

The reference: the parser's own non-streamed answer (extract_tool_calls) on the same text: content
"i" and one call f({}). A stream must add up to the same message.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.qwen3_engine_tool_parser import Qwen3EngineToolParser

folder = Path(tempfile.mkdtemp())
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False)
                           for m in ("<|im_end|>", "<tool_call>", "</tool_call>")])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))
tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")

TEXT = "i <tool_call>\n<function=f>\n</function>\n</tool_call>"
whole = Qwen3EngineToolParser(tokenizer, request.tools).extract_tool_calls(TEXT, request)

parser = Qwen3EngineToolParser(tokenizer, request.tools)
deltas = ["i", " ", "<tool_call>", "\n<function=f>\n", "</function>\n", "</tool_call>", ""]  # the last: the end-of-turn token, decoding to nothing
streamed, previous_text, previous_ids = "", "", []
for delta in deltas:
    delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
    message = parser.extract_tool_calls_streaming(previous_text, previous_text + delta, delta, previous_ids,
                                                  previous_ids + delta_ids, delta_ids, request)
    if message is not None:
        streamed += message.content or ""
    previous_text, previous_ids = previous_text + delta, previous_ids + delta_ids

print("expected:", repr(whole.content), "(the whole parse; calls:", [(c.function.name, c.function.arguments) for c in whole.tool_calls], ")")
print("actual:  ", repr(streamed), "(streamed content)")
sys.exit(1 if streamed != whole.content else 0)
