"""transformers serve ends a streamed chat completion without the OpenAI stream's terminator
`data: [DONE]`: the last event is the chunk with finish_reason (or the usage chunk), then the body ends.

OpenAI's API reference (Create chat completion, `stream`): "If set to true, the model response data
will be streamed to the client as it is generated using server-sent events" ... the stream is
"terminated by a `data: [DONE]` message"; vLLM, SGLang and llama-server send it. A client that reads
events until `[DONE]` (rather than until the connection closes) never sees the stream end as a
normal end. Where: transformers/cli/serving/chat_completion.py (5.25.0), `_streaming`'s `sse_gen`
(lines 154-210): after the finish chunk and the optional usage chunk, nothing more is yielded;
"[DONE]" appears nowhere under transformers/cli/.

Driven as a user runs it: `transformers serve MODEL` on 127.0.0.1 (a free port), serving a tiny
random-weight Qwen3 model written here with transformers itself (a byte-level BPE tokenizer built
here), and one streamed POST /v1/chat/completions; the server is stopped at the end.

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

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder), "--host",
                           "127.0.0.1", "--port", str(port), "--device", "cpu"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    body = json.dumps({"model": str(folder), "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3,
                       "stream": True}).encode()
    request = urllib.request.Request(url + "/v1/chat/completions", body, {"content-type": "application/json"})
    events = [line[len("data: "):] for line in urllib.request.urlopen(request, timeout=60).read().decode().splitlines()
              if line.startswith("data: ")]
finally:
    server.terminate()
    server.wait(10)

print(f"{len(events)} events; the last: {events[-1][:120]}")
if events[-1] != "[DONE]":
    print("BUG: the stream ends without `data: [DONE]`")
    sys.exit(1)
print("ok: the stream ends with `data: [DONE]`")
