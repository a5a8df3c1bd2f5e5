"""vLLM's Mistral tool parser splits the output at every "[TOOL_CALLS]" text, also inside a JSON string
argument: one call becomes two, the second with a broken name.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with Mistral's markers as special tokens to a temporary folder); exits 1 while
the bug is there, 0 once it is fixed.

The reference: the text after [TOOL_CALLS] is the call's name, [ARGS], and one JSON object; a
"[TOOL_CALLS]" inside a JSON string is part of the string (RFC 8259), so the call's arguments are
{"text": "see [TOOL_CALLS] here"}.
"""
import json
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.tokenizers import get_tokenizer
from vllm.tool_parsers.mistral_tool_parser import MistralToolParser

folder = Path(tempfile.mkdtemp())
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False)
                           for m in ("</s>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]")])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tools = [{"type": "function", "function": {"name": "note", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")
parser = MistralToolParser(get_tokenizer(str(folder)), request.tools)

OUTPUT = '[TOOL_CALLS]note[ARGS]{"text": "see [TOOL_CALLS] here"}'
expected = [("note", {"text": "see [TOOL_CALLS] here"})]
calls = parser.extract_tool_calls(OUTPUT, request).tool_calls
actual = []
for call in calls:
    try:
        arguments = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        arguments = call.function.arguments  # not JSON: shown as the text it is
    actual.append((call.function.name, arguments))
print("expected:", expected)
print("actual:  ", actual)
sys.exit(1 if actual != expected else 0)
