"""vLLM's Hermes tool parser, streaming: a text that ends with a prefix of "<tool_call>" ("<", "<to")
is held back as a possible tag and never released, also after the request's last token; the whole
parse of the same text keeps it as content.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with Hermes' markers as special tokens to a temporary folder); exits 1 while
the bug is there.

The reference: the parser's own non-streamed answer (extract_tool_calls) on the same text, which
is what the text is: content "a<", no call.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser

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

TEXT = "a<"
whole = Hermes2ProToolParser(tokenizer, request.tools).extract_tool_calls(TEXT, request)

parser = Hermes2ProToolParser(tokenizer, request.tools)
deltas = ["a", "<", ""]  # the last step is the end-of-turn token, which decodes to nothing
streamed, previous_text, previous_ids = "", "", []
for delta in deltas:
    delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
    message = parser.extract_tool_calls_streaming(previous_text, previous_text + delta, delta, previous_ids,
                                                  previous_ids + delta_ids, delta_ids, request)
    streamed += (message.content or "") if message is not None else ""
    previous_text, previous_ids = previous_text + delta, previous_ids + delta_ids

print("expected:", repr(whole.content), "(the whole parse; calls:", len(whole.tool_calls), ")")
print("actual:  ", repr(streamed), "(streamed content)")
sys.exit(1 if streamed != whole.content else 0)
