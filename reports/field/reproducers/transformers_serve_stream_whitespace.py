"""transformers serve answers a Qwen model's chat completion with different content streamed and not:
the non-streamed content is stripped of its leading and trailing whitespace, the streamed deltas are not.

OpenAI's chat completions: the streamed deltas of a choice, joined, are its message's content (vLLM,
SGLang and llama-server answer the same text both ways). Where: for a model type with a fallback
response template (transformers/cli/serving/utils.py `_RESPONSE_TEMPLATE_FALLBACKS`, line 464: the
qwen2 and qwen3 families; the `content` field is parsed as "text"), the non-streamed answer is
`parse_assistant_message` (utils.py line 637), i.e. `tokenizer.parse_response`, whose region close
runs the field's content parser: `_text` in transformers/utils/chat_parsing/content_parsers.py
(lines 27-28) returns `text.strip()` unless the template says `"strip": false`; the stream sends
the same region's chunks as they come (response_parser.py `_accumulate`, "text" being one of the
`STREAMABLE_PARSERS`, content_parsers.py line 330, "verbatim body text (modulo whitespace)").

Driven as a user runs it: `transformers serve MODEL` on 127.0.0.1 (a free port), serving a tiny
random-weight Qwen3 model written here with transformers itself (a byte-level tokenizer built here),
and one chat completion with `logit_bias` on the space's token (so the model writes spaces), sent
non-streamed and streamed with the same seed; the server is stopped at the end.

Needs: transformers[serving]==5.25.0 and torch. Runs in an empty folder; exits 1 while the bug is there.
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config

folder = Path(tempfile.mkdtemp())
alphabet = pre_tokenizers.ByteLevel.alphabet()
backend = Tokenizer(models.BPE({c: i for i, c in enumerate(sorted(alphabet))}, merges=[]))
backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
backend.decoder = decoders.ByteLevel()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>")
tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
tokenizer.chat_template = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                           "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                     num_attention_heads=2, num_key_value_heads=1, head_dim=8, tie_word_embeddings=True,
                     eos_token_id=tokenizer.eos_token_id)
torch.manual_seed(0)
AutoModelForCausalLM.from_config(config).save_pretrained(folder)
tokenizer.save_pretrained(folder)
(space,) = tokenizer.encode(" ", add_special_tokens=False)

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder), "--host",
                           "127.0.0.1", "--port", str(port), "--device", "cpu"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}"


def chat(stream: bool) -> str:
    """The content of the chat completion (streamed: its content deltas joined)."""
    body = {"model": str(folder), "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "seed": 1,
            "logit_bias": {str(space): 100.0}, "stream": stream}
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    answer = urllib.request.urlopen(request, timeout=120).read().decode()
    if not stream:
        return json.loads(answer)["choices"][0]["message"].get("content") or ""
    events = [json.loads(line[len("data: "):]) for line in answer.splitlines()
              if line.startswith("data: ") and line != "data: [DONE]"]
    return "".join(choice["delta"].get("content") or "" for event in events for choice in event["choices"])


try:
    for _ in range(300):
        try:
            if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    whole, streamed = chat(stream=False), chat(stream=True)
finally:
    server.terminate()
    server.wait(10)

print(f"non-streamed content: {whole!r}")
print(f"streamed content:     {streamed!r}")
if whole != streamed:
    print("BUG: the streamed content is not the non-streamed content")
    sys.exit(1)
print("ok: the same content streamed and not")
