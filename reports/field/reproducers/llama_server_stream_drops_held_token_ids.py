"""llama-server's streamed /completion loses the id of a token whose text ends inside a UTF-8
sequence: while the generated text ends in an incomplete character the server sends no event, and
the next event carries only the id of the token that completed it (or, as here, of the next token),
so the streamed ids are one short of the non-streamed ones and their decode lacks the text the
streamed events showed (textbound's field run of llama-server: `detokenizer/server_whole/streamed
ids differs from the non-streamed`, `detokenizer/server_stream/shown text the decode changes:
inserts ' ' and U+FFFD`, `detokenizer/server_stream/shown a byte run otherwise than the decode`).

Where: tools/server/server-context.cpp, process_token: when
`validate_utf8(slot.generated_text) < slot.generated_text.size()` no partial response is sent, and
send_partial_response sets `res->tokens.assign(1, tkn.tok)`, the current token alone; the held
tokens' ids are in slot.generated_tokens but never streamed.

Usage: python llama_server_stream_drops_held_token_ids.py LLAMA_SERVER MODEL_GGUF [PROMPT_IDS SEED]
  The default request is the field run's (prompt ids [51112, 55118], seed 1761683944, 10 tokens,
  temperature 1 over the whole distribution) on its model: Llama 3.1's vocabulary with two layers of
  random weights, which samples token 66822 ('Ġìļ', bytes 20 ec 9a: an unfinished character) 9th.
  With another model, give a prompt and seed whose sampled tokens split a character across tokens.
Starts llama-server on 127.0.0.1 on a free port, POSTs /completion streamed and not, stops it.
Exits 1 while the bug is there, 0 once fixed, 2 when the server cannot be started or the request
sampled no token that leaves a character unfinished (nothing shown either way).

The reference is the server's own non-streamed answer to the same request (same seed, no prompt
cache): a stream must carry the same ids.
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PROMPT, SEED = ([int(i) for i in sys.argv[3].split(",")], int(sys.argv[4])) if len(sys.argv) > 4 else ([51112, 55118], 1761683944)
REQUEST = {"prompt": PROMPT, "n_predict": 10, "seed": SEED, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0,
           "repeat_penalty": 1.0, "cache_prompt": False, "return_tokens": True}


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


def completion(url: str, stream: bool) -> tuple[str, list[int]]:
    """The answer's text and ids; streamed: the events' texts and ids concatenated."""
    request = urllib.request.Request(url + "/completion", json.dumps({**REQUEST, "stream": stream}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        if not stream:
            whole = json.load(answer)
            return whole["content"], whole["tokens"]
        events = [json.loads(line[len(b"data: "):]) for line in answer if line.startswith(b"data: ")]
    return "".join(event["content"] for event in events), [i for event in events for i in event["tokens"]]


server, url = start_server(sys.argv[1], sys.argv[2])
try:
    whole_text, whole_ids = completion(url, stream=False)
    streamed_text, streamed_ids = completion(url, stream=True)
finally:
    server.terminate()
    server.wait(30)
print(f"non-streamed: {whole_text!r} ids {whole_ids}")
print(f"streamed:     {streamed_text!r} ids {streamed_ids}")
if streamed_ids != whole_ids:
    print("ids the stream did not send:", [i for i in whole_ids if i not in streamed_ids])
    sys.exit(1)
if "\ufffd" not in whole_text:
    print("inconclusive: no sampled token left a character unfinished", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
