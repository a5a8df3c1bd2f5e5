"""NVIDIA Dynamo's front end: the dynamo dialect's requests and readings (against canned answers
shaped as ai-dynamo-runtime 1.6.1's: nvext token ids, annotation events), the launcher's readiness
marker, and, where Dynamo's environment is named ($TEXTBOUND_DYNAMO_PYTHON; nox -s server_dynamo),
the real front end serving qwen's tokenizer: its chat prompt ids are transformers'."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.canned_server import Canned, canned as canned_dialect
from textbound.server.dialect import GenerationRequest, NotProvided, open_dialect
from textbound.server.launch import MODELS_PATH, LaunchError, LaunchPlan, running_server

MESSAGES = [{"role": "user", "content": "Hi"}]
CHAT = "/v1/chat/completions"


def canned(answers: dict):
    return canned_dialect(answers, "dynamo", model="m")


def annotation(name: str, value) -> bytes:
    return f"event: {name}\n: {json.dumps(value)}\n\n".encode()


CHUNK = {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]}
FINAL = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}


def test_chat_ids_and_text_are_the_prompt_annotations() -> None:
    stream = [annotation("token_ids", "[1,872,9]"), annotation("formatted_prompt", "<s>user Hi"), CHUNK, FINAL, "[DONE]"]
    with canned({CHAT: stream, "/v1/completions": stream}) as dialect:
        assert dialect.chat_ids(MESSAGES, continue_final_message=True, chat_template_kwargs={"t": 1}) == [1, 872, 9]
        assert dialect.chat_text(MESSAGES, add_generation_prompt=False) == "<s>user Hi"
        assert dialect.tokenize("Hi", add_special_tokens=True) == [1, 872, 9]
        with pytest.raises(NotProvided, match="no route tokenizes without"):
            dialect.tokenize("Hi")
    (_, ids_body), (_, text_body), (path, tokenize_body) = Canned.requests
    assert (path, tokenize_body["prompt"], tokenize_body["nvext"]) == ("/v1/completions", "Hi", {"annotations": ["token_ids"]})
    assert ids_body["nvext"] == {"annotations": ["token_ids"]} and text_body["nvext"] == {"annotations": ["formatted_prompt"]}
    assert (ids_body["continue_final_message"], ids_body["chat_template_kwargs"], ids_body["model"]) == (True, {"t": 1}, "m")
    assert (text_body["add_generation_prompt"], text_body["stream"], text_body["max_tokens"]) == (False, True, 1)


def test_generated_ids_are_read_from_nvext_streamed_and_whole() -> None:
    streamed = [{**CHUNK, "nvext": {"completion_token_ids": [5]}},
                {**FINAL, "nvext": {"completion_token_ids": [6]}}, "[DONE]"]
    whole = {"choices": [{"index": 0, "text": "xy", "finish_reason": "length"}], "nvext": {"completion_token_ids": [5, 6]}}
    with canned({"/v1/completions": whole}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=2, stop=("z",)))
    assert (generation.text, generation.ids) == ("xy", (5, 6))
    ((_, body),) = Canned.requests
    assert body["nvext"] == {"extra_fields": ["completion_token_ids"]} and "return_token_ids" not in body
    assert (body["prompt"], body["stop"], body["skip_special_tokens"]) == ([1, 2], ["z"], True)
    with canned({CHAT: streamed}) as dialect:
        chat = dialect.generate(GenerationRequest(messages=MESSAGES, max_tokens=2, stream=True))
    assert chat.ids == (5, 6) and [chunk.ids for chunk in chat.chunks] == [(5,), (6,)]
    with canned({}) as dialect, pytest.raises(NotProvided):
        dialect.detokenize([5])


# A stand-in that answers GET /v1/models 200 but never lists the model.
EMPTY_MODELS_SERVER = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'{"data": []}')
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_server_answering_before_its_model_is_listed_is_not_ready() -> None:
    plan = LaunchPlan((sys.executable, "-c", EMPTY_MODELS_SERVER, "{port}"), startup_timeout=2, poll_interval=0.05,
                      health_path=MODELS_PATH, ready_marker='"id":"m"')
    with pytest.raises(LaunchError, match="did not answer GET /v1/models with 200 within 2 s"):
        with running_server(plan):
            pass


DYNAMO_PYTHON = os.environ.get("TEXTBOUND_DYNAMO_PYTHON", "")


@pytest.mark.skipif(not Path(DYNAMO_PYTHON).is_file(),
                    reason="Dynamo's environment is not named ($TEXTBOUND_DYNAMO_PYTHON; nox -s server_dynamo)")
def test_the_real_front_end_renders_and_tokenizes_as_transformers() -> None:
    from textbound.families.embedded import build_family
    from textbound.oracles.chat_oracle import FamilyChatOracle
    from textbound.oracles.tokenizers_oracle import TokenizersOracle
    from tools.serve_engine import worker_served_plan
    family = build_family("qwen")
    with running_server(worker_served_plan("dynamo", Path(DYNAMO_PYTHON), family)) as url:
        dialect = open_dialect("dynamo", url, model="m", timeout=30)
        expected = FamilyChatOracle.of(family).ids(MESSAGES, None, False, add_generation_prompt=True)
        assert dialect.chat_ids(MESSAGES) == expected
        assert dialect.tokenize("Hi there", add_special_tokens=True) == TokenizersOracle.from_dir(family).encode("Hi there", True)
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=3, seed=1))
        assert generation.finish_reason == "length" and len(generation.ids) == 3
