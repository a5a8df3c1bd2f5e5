"""mlx_lm.server misses a stop string that the generated text holds but the generated ids do not spell
as ``tokenizer.encode(stop)``: generation goes on to max_tokens (finish_reason "length") and the stop
string is cut out of the text wherever it appears, streamed or not.

OpenAI's API (Create chat completion, ``stop``): "Up to 4 sequences where the API will stop generating
further tokens. The returned text will not contain the stop sequence." The stop is a text sequence:
vLLM, llama-server and the whole-text reference textbound applies stop where the text first holds it.
Where: mlx_lm/generate.py (0.32.2) ``make_stop_sequences`` (lines 1039-1044) turns each stop word
into the one id sequence ``tokenizer.encode(w, add_special_tokens=False)``, which alone ends
generation (server.py ``_serve_single``/the batch loop: ``stop_matcher.advance(gen.token)``); and
``make_text_state_machine`` (lines 1083-1086) adds each stop word as a self-transition in every
state, so its text is removed from the output without ending anything.

Driven as a user runs it: ``python -m mlx_lm.server --model FOLDER`` on 127.0.0.1 (a free port),
serving a tiny random-weight Llama model written here with mlx and mlx-lm themselves (a byte-level
BPE tokenizer built here, with one merge: "ab"), and one chat completion, streamed and not, steered
by ``logit_bias`` to the id of "ab" with ``stop: ["b"]``; the server is stopped at the end.

Needs: mlx-lm 0.32.2 (on Linux: pip install 'mlx-lm[cpu]==0.32.2'). Runs in an empty folder;
exits 1 while the bug is there.

Expected (stop at the first "b" of the text): content 'a', finish_reason 'stop'.
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
alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
vocab = {c: i for i, c in enumerate(alphabet)}
vocab["ab"] = len(vocab)
backend = Tokenizer(models.BPE(vocab, merges=[("a", "b")]))
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
AB = tokenizer.convert_tokens_to_ids("ab")
assert tokenizer.encode("b", add_special_tokens=False) != [AB]

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
        body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 1.0,
                           "seed": 0, "logit_bias": {str(AB): 100}, "stop": ["b"], "stream": stream}).encode()
        request = urllib.request.Request(url + "/v1/chat/completions", body, {"content-type": "application/json"})
        raw = urllib.request.urlopen(request, timeout=60).read().decode()
        if stream:
            choices = [json.loads(line[len("data: "):])["choices"] for line in raw.splitlines()
                       if line.startswith("data: ") and line != "data: [DONE]"]
            deltas = [choice[0] for choice in choices if choice]
            answers["streamed"] = ("".join(d["delta"].get("content") or "" for d in deltas),
                                   [d["finish_reason"] for d in deltas if d["finish_reason"]][-1])
        else:
            choice = json.loads(raw)["choices"][0]
            answers["whole"] = (choice["message"]["content"], choice["finish_reason"])
finally:
    server.terminate()
    server.wait(10)

expected = ("a", "stop")
failed = False
for how, got in answers.items():
    print(f"{how}: content {got[0]!r}, finish_reason {got[1]!r}; expected content {expected[0]!r}, "
          f"finish_reason {expected[1]!r}")
    failed |= got != expected
if failed:
    print("BUG: the stop string 'b', generated inside the token 'ab', is cut out of the text and does not stop it")
    sys.exit(1)
print("ok: generation stops at the first 'b' of the text")
