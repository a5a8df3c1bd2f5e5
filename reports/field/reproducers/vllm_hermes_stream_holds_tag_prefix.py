"""vLLM's Hermes tool parser, streamed as the OpenAI server streams a chat completion: does a text
that ends with a prefix of "<tool_call>" ("<", "<to") lose that end, also after the request's last
token? The whole parse of the same text keeps it as content.

The parser is driven as ``OpenAIServingChat``'s streaming generator drives it: the ``Parser`` class
``ParserManager.get_parser`` composes for ``--tool-call-parser hermes`` (no reasoning parser), one
``ChatStreamProcessor`` per choice, ``step(delta_text, delta_token_ids, finish_reason,
prompt_token_ids)`` per engine output, the last one carrying the end-of-turn id and finish reason
"stop" (where ``Parser.parse_delta`` runs ``finalize_generation`` and flushes engine-based parsers).

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with Hermes' markers as special tokens to a temporary folder); exits 1 while
the text's end is lost, 0 when the streamed content adds up to the whole parse's.

The reference: the server's own non-streamed answer on the same text (``Parser.parse``), content
"a<", no call.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager
from vllm.tokenizers import get_tokenizer

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
parser_cls = ParserManager.get_parser(tool_parser_name="hermes", reasoning_parser_name=None, enable_auto_tools=True,
                                      is_harmony=False, tokenizer=tokenizer)
prompt_ids = tokenizer.encode("Hi", add_special_tokens=False)

failed = False
for text, deltas in (("a<", ["a", "<"]), ("a<to", ["a", "<", "to"])):
    _, whole_content, whole_calls = parser_cls(tokenizer, request.tools).parse(text, request, enable_auto_tools=True)
    processor = ChatStreamProcessor(request, parser_cls(tokenizer, request.tools), enable_auto_tools=True,
                                    parser_cls=parser_cls)
    streamed = ""
    for delta, finish in [*((d, None) for d in deltas), ("", "stop")]:  # the end-of-turn token decodes to nothing
        ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
        step = processor.step(delta, ids, finish, prompt_ids)
        streamed += (step.delta.content or "") if step.delta is not None else ""
    print(f"{text!r} streamed as {deltas} then the end of turn")
    print("  expected:", repr(whole_content), "(the server's whole parse; calls:", len(whole_calls or []), ")")
    print("  actual:  ", repr(streamed), "(streamed content)")
    failed |= streamed != (whole_content or "")
sys.exit(1 if failed else 0)
