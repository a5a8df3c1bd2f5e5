"""mlx_lm.server's chat logprobs with ``top_logprobs`` describe a most likely token, not the token it
generated: each ``logprobs.content`` entry is the first of the step's top candidates, so the entries
do not spell the reply once sampling picks anything else; and a streamed answer carries no logprobs.

OpenAI's API (the chat completion object, ``choices[].logprobs.content``): "A list of message content
tokens with log probability information", each entry "token: The token", "logprob: The log
probability of this token", "top_logprobs: List of the most likely tokens and their log probability,
at this token position". Where: mlx_lm/server.py (0.32.2) ``APIHandler.generate_response`` (lines
1467-1472): ``"content": [dict(i[0], top_logprobs=i) ...]`` with ``i`` the step's top candidates
(``_format_top_logprobs``, lines 513-524: ``mx.argpartition`` of the logprobs, the top_n in no
order), so ``i[0]`` stands for the generated token; the streamed chunks are built without logprobs
(``handle_completion``, lines 1651 and 1674; pull request ml-explore/mlx-lm#1630, closed unmerged).

Driven as a user runs it: ``python -m mlx_lm.server --model FOLDER`` on 127.0.0.1 (a free port),
serving a tiny random-weight Llama model written here with mlx and mlx-lm themselves (a byte-level
BPE tokenizer built here), and one chat completion, ``logprobs: true, top_logprobs: 1``, steered by
``logit_bias`` (+100) to the ids of "x" and "y", so both are likely and sampling at temperature 1
picks either; the server is stopped at the end.

Needs: mlx-lm 0.32.2 (on Linux: pip install 'mlx-lm[cpu]==0.32.2'). Runs in an empty folder;
exits 1 while the bug is there.

Expected: the entries' tokens, joined, are the reply's content, whole and streamed.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import mlx.core as mx
from mlx_lm.models import llama
from mlx_lm.utils import save_config, save_model
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

folder = Path(tempfile.mkdtemp())
backend = Tokenizer(models.BPE({c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}, merges=[]))
backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
backend.decoder = decoders.ByteLevel()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>")
tokenizer.chat_template = ("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                           "{% if add_generation_prompt %}assistant: {% endif %}")
tokenizer.save_pretrained(folder)
config = {"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 16, "intermediate_size": 32,
          "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-6,
          "tie_word_embeddings": True, "eos_token_id": tokenizer.eos_token_id}
mx.random.seed(0)
save_model(folder, llama.Model(llama.ModelArgs.from_dict(config)))
save_config(config, folder / "config.json")
STEERED = {str(tokenizer.convert_tokens_to_ids(c)): 100 for c in "xy"}

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([sys.executable, "-m", "mlx_lm.server", "--model", str(folder), "--host", "127.0.0.1",
                           "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env={**os.environ, "HF_HUB_CACHE": str(folder)})
answers = {}
try:
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    for stream in (False, True):
        body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8, "temperature": 1.0,
                           "seed": 0, "logit_bias": STEERED, "logprobs": True, "top_logprobs": 1,
                           "stream": stream}).encode()
        request = urllib.request.Request(url + "/v1/chat/completions", body, {"content-type": "application/json"})
        raw = urllib.request.urlopen(request, timeout=60).read().decode()
        if stream:
            choices = [choice for line in raw.splitlines() if line.startswith("data: ") and line != "data: [DONE]"
                       for choice in json.loads(line[len("data: "):])["choices"]]
            content = "".join(choice["delta"].get("content") or "" for choice in choices)
            entries = [entry for choice in choices for entry in (choice.get("logprobs") or {}).get("content", [])]
        else:
            choice = json.loads(raw)["choices"][0]
            content, entries = choice["message"]["content"], choice["logprobs"]["content"]
        answers["streamed" if stream else "whole"] = (content, "".join(entry["token"] for entry in entries))
finally:
    server.terminate()
    server.wait(10)

failed = False
for how, (content, spelled) in answers.items():
    print(f"{how}: content {content!r}; the logprobs entries' tokens spell {spelled!r}")
    failed |= content != spelled
if failed:
    print("BUG: the logprobs entries are not the generated tokens (whole: the step's top candidate; streamed: none)")
    sys.exit(1)
print("ok: the logprobs entries spell the reply")
