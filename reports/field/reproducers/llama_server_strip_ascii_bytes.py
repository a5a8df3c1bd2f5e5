"""llama-server's Jinja `trim` and `str.strip()` strip ASCII whitespace only, and `strip(chars)`
strips single bytes: a message whose content starts or ends with a Unicode space (U+2008, U+3000,
U+00A0, U+2028) keeps it in the prompt where Jinja2 strips it, and `'éte'.strip('è')` cuts the
first byte off 'é', leaving invalid UTF-8 (textbound's field run of llama-server: Llama 3.1's
`chat/ids/ids: inserts whitespace at the end`, a user message "\u2008" under the family's own
template, which renders `message['content'] | trim`).

Where: `string::strip` (common/jinja/string.cpp) tests each byte with `isspace`, or looks each
byte up in `chars`; the `trim` filter is an alias of `strip` (common/jinja/runtime.cpp).

Usage: python llama_server_strip_ascii_bytes.py LLAMA_SERVER MODEL_GGUF
  MODEL_GGUF: any GGUF (the chat template is given inline, with --chat-template-file). Starts
  llama-server on 127.0.0.1 on a free port, POSTs /apply-template, stops it. Exits 1 while the bug
  is there, 0 once fixed, 2 when the server cannot be started.

The reference: Jinja2 3.1.6 (transformers 5.24.0 renders chat templates with it), whose `trim` and
`str.strip()` are Python's `str.strip`: every character with the Unicode White_Space property.
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TEMPLATE = "{% for message in messages %}[{{ message['content'] | trim }}|{{ message['content'].strip('\u00e8') }}]{% endfor %}"
MESSAGES = [{"role": "user", "content": "\u2008hi\u3000"}, {"role": "user", "content": "\u00a0hi\u2028"},
            {"role": "user", "content": "\u00e9te"}]
# Jinja2's render: Unicode spaces stripped by trim, and strip('è') leaving 'é' whole
EXPECTED = "[hi|\u2008hi\u3000][hi|\u00a0hi\u2028][\u00e9te|\u00e9te]"


def start_server(binary: str, model: str, template: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tempfile.TemporaryFile()
    server = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "512",
                               "-np", "1", "-t", "1", "--no-webui", "--no-warmup", "--jinja",
                               "--chat-template-file", str(template)], stdout=log, stderr=subprocess.STDOUT)
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


def rendered(url: str) -> str:
    body = {"messages": MESSAGES, "add_generation_prompt": False}
    request = urllib.request.Request(url + "/apply-template", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read().decode("utf-8", errors="backslashreplace"))["prompt"]


with tempfile.TemporaryDirectory() as folder:
    template = Path(folder) / "template.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    server, url = start_server(sys.argv[1], sys.argv[2], template)
    try:
        prompt = rendered(url)
    finally:
        server.terminate()
        server.wait(30)
print(f"jinja2       {EXPECTED!r}\nllama-server {prompt!r}")
sys.exit(0 if prompt == EXPECTED else 1)
