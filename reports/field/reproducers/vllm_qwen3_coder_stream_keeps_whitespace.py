"""vLLM's Qwen3-Coder tool parser (--tool-call-parser qwen3_coder), streaming: whitespace between the
content and a call stays in the streamed content ("i "), where the whole parse of the same text
strips it ("i"): the streamed and non-streamed messages disagree.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with the format's markers as special tokens to a temporary folder); exits 1
while the bug is there.

The reference: the server's own non-streamed answer (Parser.parse) on the same text: content
"i" and one call f({}). A stream must add up to the same message.

The parser is driven as ``vllm serve``'s OpenAI front end drives it: the Parser class
``ParserManager.get_parser`` composes, streamed through ``ChatStreamProcessor.step`` (token ids, the
prompt's ids, the last step carrying the finish reason, where the parser's finishing step runs), whole
through ``Parser.parse`` with the output's ids.
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


def server_parser(tool_parser: str):
    """The Parser class ``vllm serve --tool-call-parser TOOL_PARSER`` composes (no reasoning parser)."""
    return ParserManager.get_parser(tool_parser_name=tool_parser, reasoning_parser_name=None, enable_auto_tools=True,
                                    is_harmony=False, tokenizer=tokenizer)


def whole_parse(parser_cls, text: str):
    """The server's non-streamed parse (OpenAIServingChat: Parser.parse with the output's ids, the
    end-of-turn id last): (content, [(name, arguments)])."""
    ids = tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id]
    _, content, calls = parser_cls(tokenizer, request.tools).parse(text, request, enable_auto_tools=True,
                                                                  model_output_token_ids=ids)
    return content, [(call.name, call.arguments) for call in calls or []]


def stream(parser_cls, deltas: list[str]):
    """The server's streamed parse: one ChatStreamProcessor, a step per delta with its ids and the
    prompt's, the last ("", the end-of-turn id) carrying finish reason "stop". Returns (content, names)."""
    processor = ChatStreamProcessor(request, parser_cls(tokenizer, request.tools), enable_auto_tools=True,
                                    parser_cls=parser_cls)
    prompt_ids = tokenizer.encode("Hi", add_special_tokens=False)
    content, names = "", []
    for delta in deltas:
        delta_ids = tokenizer.encode(delta, add_special_tokens=False) if delta else [tokenizer.eos_token_id]
        message = processor.step(delta, delta_ids, None if delta else "stop", prompt_ids).delta
        if message is not None:
            content += message.content or ""
            names += [call.function.name for call in message.tool_calls or [] if call.function and call.function.name]
    return content, names


TEXT = "i <tool_call>\n<function=f>\n</function>\n</tool_call>"
parser_cls = server_parser("qwen3_coder")
whole_content, whole_calls = whole_parse(parser_cls, TEXT)
deltas = ["i", " ", "<tool_call>", "\n<function=f>\n", "</function>\n", "</tool_call>", ""]  # the last: the end-of-turn token, decoding to nothing
streamed, _ = stream(parser_cls, deltas)

print("expected:", repr(whole_content), "(the whole parse; calls:", whole_calls, ")")
print("actual:  ", repr(streamed), "(streamed content)")
sys.exit(1 if streamed != (whole_content or "") else 0)
