"""vLLM's engine-based tool parsers for GLM-4.5/4.7 (--tool-call-parser glm45) and MiniMax-M2
(--tool-call-parser minimax_m2), streaming: the space between the content and a call stays in the
streamed content ("i "), where the whole parse of the same text strips it ("i").

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with the formats' markers as special tokens to a temporary folder); exits 1
while the bug is there.

The check: a stream must add up to the message the same request gets without `stream` (the
parser's own extract_tool_calls on the same text). Which of the two is right is vLLM's to say: its
whole parse strips on purpose (ParserEngineConfig.strip_content_whitespace_with_tools), while the
reference, transformers' response-parser rules as textbound's oracles.tool_reference applies them
(transformers 5.24.0), keeps the space: content "i " and the call f({}) for both texts (REFERENCE).
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.glm47_moe_tool_parser import Glm47MoeModelToolParser
from vllm.tool_parsers.minimax_m2_tool_parser import MinimaxM2ToolParser

MARKERS = ("<|im_end|>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
           "<minimax:tool_call>", "</minimax:tool_call>", "<think>", "</think>")
folder = Path(tempfile.mkdtemp())
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False) for m in MARKERS])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))
tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")

# (parser, the model's output as the deltas a server streams: one token each, the last one the
# end-of-turn token, which decodes to nothing)
CASES = [
    (Glm47MoeModelToolParser, ["i", " ", "<tool_call>", "f", "</tool_call>", ""]),
    (MinimaxM2ToolParser, ["i", " ", "<minimax:tool_call>", '<invoke name="f">', "</invoke>", "</minimax:tool_call>", ""]),
]

REFERENCE = {"content": "i ", "calls": [("f", {})]}  # oracles.tool_reference, transformers 5.24.0

failed = False
for parser_class, deltas in CASES:
    whole = parser_class(tokenizer, request.tools).extract_tool_calls("".join(deltas), request)
    parser = parser_class(tokenizer, request.tools)
    streamed, names, previous_text, previous_ids = "", [], "", []
    for delta in deltas:
        delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
        message = parser.extract_tool_calls_streaming(previous_text, previous_text + delta, delta, previous_ids,
                                                      previous_ids + delta_ids, delta_ids, request)
        if message is not None:
            streamed += message.content or ""
            names += [call.function.name for call in message.tool_calls or [] if call.function and call.function.name]
        previous_text, previous_ids = previous_text + delta, previous_ids + delta_ids
    print(f"{parser_class.__name__} on {''.join(deltas)!r}")
    print("  expected:", repr(whole.content), "(the whole parse; calls:", [c.function.name for c in whole.tool_calls], ")")
    print("  actual:  ", repr(streamed), "(streamed content; calls:", names, ")")
    print("  (the reference:", REFERENCE, ")")
    failed |= streamed != whole.content
sys.exit(1 if failed else 0)
