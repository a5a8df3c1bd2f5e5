"""transformers serve keeps the stop string in a chat completion's content: `stop` ends generation,
but the text is not cut before the stop string (nor is the rest of the token that completed it dropped).

OpenAI's API reference (Create chat completion, `stop`): "Up to 4 sequences where the API will stop
generating further tokens. The returned text will not contain the stop sequence." vLLM, SGLang and
llama-server cut the text before it. Where: transformers/cli/serving/chat_completion.py (5.25.0),
`ChatCompletionHandler._build_generation_kwargs` (lines 284-285) passes `stop` to `generate` as
`stop_strings`, which only halts generation after the token completing a stop string; the content is
then the decode of every generated token (model_manager.py `generate_non_streaming`, line 165;
streamed: each token's text as it comes, chat_completion.py lines 193-195), and "stop" appears
nowhere else under transformers/cli/serving/.

Driven as a user runs it: `transformers serve MODEL` on 127.0.0.1 (a free port), serving a tiny
random-weight Qwen3 model written here with transformers itself (a byte-level tokenizer, one token a
byte, so a stop string ends exactly on a token; sampling, as chat models' generation configs ask),
a seeded chat completion without `stop`, then the same request with `stop` set to a character of
its content, non-streamed and streamed; the server is stopped at the end.

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
model = AutoModelForCausalLM.from_config(config)
model.generation_config.do_sample = True  # as chat models ship it: the request's seed then picks the output
model.save_pretrained(folder)
tokenizer.save_pretrained(folder)

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder), "--host",
                           "127.0.0.1", "--port", str(port), "--device", "cpu"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}"


def chat(**fields) -> str:
    """The content of a seeded chat completion (streamed: its content deltas joined)."""
    body = {"model": str(folder), "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 16, "seed": 1,
            "temperature": 1.0, **fields}
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    answer = urllib.request.urlopen(request, timeout=120).read().decode()
    if not fields.get("stream"):
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
    unstopped = chat()
    stop = next((c for c in unstopped[2:] if c.isascii() and c.isalnum()), None)
    if stop is None:
        sys.exit(f"no ASCII letter or digit to stop at in {unstopped!r}: try another seed")
    expected = unstopped[:unstopped.index(stop)]
    stopped = {"non-streamed": chat(stop=[stop]), "streamed": chat(stop=[stop], stream=True)}
finally:
    server.terminate()
    server.wait(10)

print(f"without stop: {unstopped!r}")
print(f"stop: {[stop]}; expected content (the text before the stop string): {expected!r}")
for how, content in stopped.items():
    print(f"{how}: {content!r}")
if any(content != expected for content in stopped.values()):
    print("BUG: the content is not cut before the stop string")
    sys.exit(1)
print("ok: the content ends before the stop string")
