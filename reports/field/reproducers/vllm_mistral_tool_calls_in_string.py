"""vLLM's Mistral tool parser (--tool-call-parser mistral, a v11+ tokenizer: one holding [ARGS]),
called as the OpenAI server calls it for a whole response: does a "[TOOL_CALLS]" inside a JSON
string argument split one call into two?

The server's non-streamed path (``OpenAIServingChat``, vllm/entrypoints/openai/chat_completion/
serving.py) builds the ``Parser`` ``ParserManager.get_parser`` composes and calls
``parser.parse(output.text, request, enable_auto_tools=True, model_output_token_ids=token_ids)``:
for a v11+ tokenizer that is the parser engine (vllm/parser/engine/parser_engine.py
``_single_pass_parse``), which reads markers by token id. So the output is given with the ids a
model would have generated, in two spellings of the "[TOOL_CALLS]" inside the string:

- as text (its characters' tokens): what a model writing the marker's text in an argument emits;
- as the marker's special token (what the tokenizer's encode of the whole text gives).

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer with Mistral's markers as special tokens to a temporary folder). Exits 1 when
the text spelling splits the call (a model writing the marker's text gets a broken call), 0 when it
does not; the special-token spelling is printed for the record (a control token inside a string is
the model's error, and splitting there is the parser's choice).

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
from vllm.parser import ParserManager
from vllm.tokenizers import get_tokenizer

MARKERS = ("</s>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]")
folder = Path(tempfile.mkdtemp())
plain = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
plain.pre_tokenizer, plain.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
plain.save(str(folder / "plain.json"))
plain = tokenizers.Tokenizer.from_file(str(folder / "plain.json"))  # the bytes' ids, no marker matched
source = tokenizers.Tokenizer.from_file(str(folder / "plain.json"))
source.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False) for m in MARKERS])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>",
                                                          "tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))
tools = [{"type": "function", "function": {"name": "note", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}}}}]
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=tools, tool_choice="auto")
parser_cls = ParserManager.get_parser(tool_parser_name="mistral", reasoning_parser_name=None, enable_auto_tools=True,
                                      is_harmony=False, tokenizer=tokenizer)

OUTPUT = '[TOOL_CALLS]note[ARGS]{"text": "see [TOOL_CALLS] here"}'
head, inner, tail = "[TOOL_CALLS]note[ARGS]{\"text\": \"see ", "[TOOL_CALLS]", " here\"}"
head_ids = tokenizer.encode(head, add_special_tokens=False)
SPELLINGS = {
    "text": head_ids + plain.encode(inner).ids + plain.encode(tail).ids + [tokenizer.eos_token_id],
    "special token": tokenizer.encode(OUTPUT, add_special_tokens=False) + [tokenizer.eos_token_id],
}
expected = [("note", {"text": "see [TOOL_CALLS] here"})]
print("expected:", expected)
results = {}
for spelling, ids in SPELLINGS.items():
    assert tokenizer.decode(ids, skip_special_tokens=False).startswith(OUTPUT), spelling
    parser = parser_cls(tokenizer, request.tools)
    _, content, calls = parser.parse(OUTPUT, request, enable_auto_tools=True, model_output_token_ids=ids)
    actual = []
    for call in calls or []:
        try:
            arguments = json.loads(call.arguments)
        except json.JSONDecodeError:
            arguments = call.arguments  # not JSON: shown as the text it is
        actual.append((call.name, arguments))
    results[spelling] = actual
    print(f"actual, the inner marker as {spelling}:", actual, "content:", repr(content))
sys.exit(1 if results["text"] != expected else 0)
