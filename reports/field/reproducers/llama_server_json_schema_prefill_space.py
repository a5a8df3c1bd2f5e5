"""llama-server refuses every `response_format` JSON-schema chat request on a SentencePiece
vocabulary whose chat template's generation prompt begins with ordinary text: 400 "Failed to
initialize samplers: std::exception" (textbound's field run of llama-server on Llama 2's vocabulary,
no chat template of its own, so the server's ChatML fallback: `structured/server/server error:
status 400 ... Failed to initialize samplers: std::exception`, every one of 10 requests).

Where: common/sampling.cpp, common_sampler_init. The generation prompt ("<|im_start|>assistant\n")
is tokenized and fed to the grammar, whose root begins with that same text. The SentencePiece
tokenizer prepends its dummy-prefix space, so the first token is '▁<' (" <"); the rule "Some
tokenizers will add a space before the first special token, need to exclude" skips that whole
token, '<' included, and the grammar then rejects '|' and throws std::runtime_error("Unexpected
empty grammar stack ..."). The handler rethrows with `throw e;`, a copy sliced to std::exception,
so the 400 says only "std::exception" (the server log has the grammar and the generation prompt).

Usage: python llama_server_json_schema_prefill_space.py LLAMA_SERVER MODEL_GGUF
  MODEL_GGUF: a model with a SentencePiece ("llama") vocabulary that adds the prefix space and has
  no single token for "<|im_start|>" (Llama 2's; the field run's was Llama 2's vocabulary with two
  layers of random weights). The ChatML template is asked for by name (--chat-template chatml).
Starts llama-server on 127.0.0.1 on a free port, POSTs /v1/chat/completions, stops it. Exits 1 while
the bug is there (the 400), 0 once the request is served, 2 for a failure to start or another answer.

The reference: the request is valid (the same schema is served on this model by /completion's
json_schema, and on Llama 3.1's and Qwen3's vocabularies by /v1/chat/completions), so the expected
answer is 200 with content that is a JSON object of the schema.
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SCHEMA = {"type": "object", "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}}, "required": ["lat", "lng"]}
BODY = {"messages": [{"role": "user", "content": "Where is Zürich?"}], "max_tokens": 64, "seed": 1,
        "response_format": {"type": "json_schema", "json_schema": {"name": "place", "schema": SCHEMA, "strict": True}}}


def start_server(binary: str, model: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tempfile.TemporaryFile()
    server = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "512",
                               "-np", "1", "-t", "1", "--no-webui", "--no-warmup", "--jinja", "--chat-template", "chatml"],
                              stdout=log, stderr=subprocess.STDOUT)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            return server, url
        except OSError:  # refused, or 503 while the model loads
            time.sleep(0.2)
    server.kill()
    log.seek(0)
    print("llama-server did not start:", log.read()[-1500:].decode(errors="replace"), file=sys.stderr)
    sys.exit(2)


server, url = start_server(sys.argv[1], sys.argv[2])
try:
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(BODY).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
finally:
    server.terminate()
    server.wait(30)
print("expected: 200 with a JSON object of the schema", json.dumps(SCHEMA))
print(f"actual:   {status} {text[:300]}")
if status == 400 and "Failed to initialize samplers" in text:
    sys.exit(1)
sys.exit(0 if status == 200 else 2)
