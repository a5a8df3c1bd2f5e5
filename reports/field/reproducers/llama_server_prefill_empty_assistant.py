"""llama-server's assistant prefill drops the whole assistant turn when the final assistant message
is empty: a conversation ending in {"role": "assistant", "content": ""} (or null) is rendered as
if that message were absent and no generation prompt were asked for, so the prompt ends after the
user's turn, without the assistant header the message should continue (textbound's field run of
llama-server on Llama 3.1's template: `chat/ids/ids: drops tokens at the end`, the example
[assistant null] -> [<|begin_of_text|>] alone).

Where: a final assistant message turns on prefill (continue_final_message "auto", and
add_generation_prompt false; tools/server/server-common.cpp), the message is taken out of the
rendered list (common/chat.cpp), and its header and content are put back only when
`!continue_msg.empty()` (common/chat-auto-parser-generator.cpp); common_chat_msg::empty() does not
look at the role, so an assistant message without content counts as no message at all.

Usage: python llama_server_prefill_empty_assistant.py LLAMA_SERVER MODEL_GGUF
  MODEL_GGUF: any GGUF (the chat template is given inline, with --chat-template-file; the field
  run's model was a two-layer random-weight Llama 3.1 model). Starts llama-server on 127.0.0.1 on a
  free port, POSTs /apply-template, stops it. Exits 1 while the bug is there, 0 once fixed, 2 when
  the server cannot be started.

The reference: transformers 5.24.0 `apply_chat_template(messages, tokenize=False,
continue_final_message=True)` on this template, as recorded when this was written: it keeps the
assistant header of the message it continues and cuts after its content ("Hi", or "" right after
the header's "\n\n"); content null it refuses (ValueError: no "content" to continue).
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TEMPLATE = ("{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
            "{{ message['content'] }}<|eot_id|>{% endfor %}"
            "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
USER = {"role": "user", "content": "hi"}
REFERENCE = {  # final assistant content -> transformers' continue_final_message prompt (this template)
    "Hi": "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi",
    "": "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
}
HEADER = "<|start_header_id|>assistant<|end_header_id|>"


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


def rendered(url: str, messages: list[dict]) -> str:
    request = urllib.request.Request(url + "/apply-template", json.dumps({"messages": messages}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["prompt"]


with tempfile.TemporaryDirectory() as folder:
    template = Path(folder) / "template.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    server, url = start_server(sys.argv[1], sys.argv[2], template)
    try:
        answers = {content: rendered(url, [USER, {"role": "assistant", "content": content}])
                   for content in (*REFERENCE, None)}
    finally:
        server.terminate()
        server.wait(30)
for content, prompt in answers.items():
    print(f"final assistant content {content!r}:\n  transformers {REFERENCE.get(content, '(refuses: no content to continue)')!r}"
          f"\n  llama-server {prompt!r}")
# The bug: an empty message loses its header (content null, which the reference refuses, likewise).
sys.exit(0 if answers[""] == REFERENCE[""] and HEADER in answers[None] else 1)
