"""llama.cpp applies no Unicode normalizer when it tokenizes: Qwen2/Qwen3's tokenizer.json normalizes
with NFC first, llama.cpp's BPE tokenizer (pre-tokenizer "qwen2") encodes the text's own code points.
A compatibility ideograph (U+F9D8, NFC U+5F8B) and a decomposed "é" (e + U+0301, NFC U+00E9)
get other ids than tokenizers gives (textbound's field run of llama-server on Qwen3's vocabulary:
`tokenizer/encode/ids: text not NFC-normalized`, 16 cases; re-run, `tokenizer/tokenizer.json/skips
the normalizer`, 40).

Usage: python llama_server_tokenize_no_nfc.py LLAMA_SERVER QWEN3_GGUF
  LLAMA_SERVER: the llama-server binary; QWEN3_GGUF: any GGUF with Qwen3's vocabulary (the field run
  used a two-layer random-weight model of it; only /tokenize is called, so the weights do not matter).
Starts llama-server on 127.0.0.1 on a free port, POSTs /tokenize, stops it. Needs nothing else.
Exits 1 while the bug is there, 0 once fixed, 2 when the server cannot be started.

The reference's ids: tokenizers 0.23.3 on Qwen3's tokenizer.json (normalizer {"type": "NFC"}),
`Tokenizer.encode(text, add_special_tokens=False).ids`, as recorded when this was written.
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

REFERENCE = {  # text -> tokenizers' ids (Qwen3's tokenizer.json, NFC first)
    "\uf9d8": [99499],        # U+F9D8 -> NFC U+5F8B, one token 'å¾ĭ'
    "e\u0301": [963],         # e + U+0301 -> NFC U+00E9, one token 'Ã©'
}


def start_server(binary: str, model: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tempfile.TemporaryFile()
    server = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "512",
                               "-np", "1", "-t", "1", "--no-webui", "--no-warmup"], stdout=log, stderr=subprocess.STDOUT)
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


def tokenize(url: str, text: str) -> list[int]:
    request = urllib.request.Request(url + "/tokenize", json.dumps({"content": text, "add_special": False}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["tokens"]


server, url = start_server(sys.argv[1], sys.argv[2])
try:
    differing = 0
    for text, expected in REFERENCE.items():
        actual = tokenize(url, text)
        differing += actual != expected
        print(f"{text!r} ({' '.join(f'U+{ord(c):04X}' for c in text)}): tokenizers {expected}, llama-server {actual}")
finally:
    server.terminate()
    server.wait(30)
sys.exit(1 if differing else 0)
