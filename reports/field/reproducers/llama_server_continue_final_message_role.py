"""llama-server's `continue_final_message` continues any final message as an assistant turn: a
conversation ending in a user message (or a message of another role) is rendered with that
message's text after the *assistant* header, where transformers continues the message in its own
role (textbound's field run of llama-server: Qwen3's `chat/ids/ids: adds an added token in the
middle`, Llama 3.1's `chat/ids/ids: replaces ASCII letters by ASCII letters`).

Where: `oaicompat_chat_params_parse` (tools/server/server-common.cpp) takes the flag and never looks
at the final message's role; `common_chat_templates_apply_jinja` (common/chat.cpp) takes the final
message out of the rendered list; `peg_generator::generate_parser`
(common/chat-auto-parser-generator.cpp) appends the generation prompt (the assistant header) and
the message's content, never its role.

Usage: python llama_server_continue_final_message_role.py LLAMA_SERVER MODEL_GGUF
  MODEL_GGUF: any GGUF (the chat template is given inline, with --chat-template-file). Starts
  llama-server on 127.0.0.1 on a free port, POSTs /apply-template with continue_final_message,
  stops it. Exits 1 while the bug is there, 0 once fixed, 2 when the server cannot be started.

The reference: transformers 5.24.0 `apply_chat_template(messages, chat_template=TEMPLATE,
tokenize=False, continue_final_message=True)`, as recorded when this was written (the assistant
case, which llama-server gets right, is there to show the request is served).
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
CONVERSATIONS = {  # the final message's role -> (messages, transformers' continue_final_message prompt)
    "user": ([USER], "<|start_header_id|>user<|end_header_id|>\n\nhi"),
    "r": ([USER, {"role": "r", "content": "E"}],
          "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>r<|end_header_id|>\n\nE"),
    "assistant": ([USER, {"role": "assistant", "content": "Hi"}],
                  "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
                  "\n\nHi"),
}


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
    body = {"messages": messages, "add_generation_prompt": False, "continue_final_message": True}
    request = urllib.request.Request(url + "/apply-template", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["prompt"]


with tempfile.TemporaryDirectory() as folder:
    template = Path(folder) / "template.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    server, url = start_server(sys.argv[1], sys.argv[2], template)
    try:
        answers = {role: rendered(url, messages) for role, (messages, _) in CONVERSATIONS.items()}
    finally:
        server.terminate()
        server.wait(30)
for role, prompt in answers.items():
    print(f"final message of role {role!r}:\n  transformers {CONVERSATIONS[role][1]!r}\n  llama-server {prompt!r}")
sys.exit(0 if all(prompt == CONVERSATIONS[role][1] for role, prompt in answers.items()) else 1)
