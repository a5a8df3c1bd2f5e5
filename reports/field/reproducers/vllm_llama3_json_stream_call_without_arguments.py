"""vLLM's Llama 3 JSON tool parser: a call object without "arguments"/"parameters" is streamed as a
tool call (its name announced, arguments never JSON), while the whole parse of the same text
rejects it and returns the text as content: the streamed and non-streamed answers disagree.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with Llama 3's markers as special tokens to a temporary folder); exits 1 while
the bug is there.

The reference: the parser's own non-streamed answer (extract_tool_calls) on the same text: no call,
content '{"name": "f"}'. A stream must add up to the same message.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.llama_tool_parser import Llama3JsonToolParser

folder = Path(tempfile.mkdtemp())
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False)
                           for m in ("<|eot_id|>", "<|python_tag|>")])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|eot_id|>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))
tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")

TEXT = '{"name": "f"}'
whole = Llama3JsonToolParser(tokenizer, request.tools).extract_tool_calls(TEXT, request)
expected = {"content": whole.content, "calls": [c.function.name for c in whole.tool_calls]}

parser = Llama3JsonToolParser(tokenizer, request.tools)
content, calls, previous_text, previous_ids = "", [], "", []
for delta in ['{"name": ', '"f"}', ""]:  # the last step is the end-of-turn token, which decodes to nothing
    delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
    message = parser.extract_tool_calls_streaming(previous_text, previous_text + delta, delta, previous_ids,
                                                  previous_ids + delta_ids, delta_ids, request)
    if message is not None:
        content += message.content or ""
        calls += [c.function.name for c in message.tool_calls or [] if c.function and c.function.name]
    previous_text, previous_ids = previous_text + delta, previous_ids + delta_ids
actual = {"content": content or None, "calls": calls}

print("expected:", expected, "(the whole parse)")
print("actual:  ", actual, "(streamed)")
sys.exit(1 if actual != expected else 0)
