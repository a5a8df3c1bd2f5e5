"""llama-cpp-python's own server and chat formatter: the launcher's readiness path (a stand-in
without /health), the llama-cpp-python dialect's requests and readings (against canned answers
shaped as llama_cpp/server/app.py's), and, where llama-cpp-python is installed (nox -s
server_llama_cpp_python), its chat formatter through the server's request model."""
from __future__ import annotations

import sys

import pytest

from tests.canned_server import Canned, canned as canned_dialect
from textbound.server.dialect import GenerationRequest, NotProvided
from textbound.server.dialects.llama_cpp_python import SAMPLING
from textbound.server.launch import MODELS_PATH, LaunchPlan, running_server

# A stand-in for llama_cpp.server: no /health (404), GET /v1/models answered 200.
MODELS_ONLY_SERVER = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404); self.end_headers()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""
MESSAGES = [{"role": "user", "content": "Hi"}]


def test_a_server_without_health_is_ready_when_its_models_answer() -> None:
    plan = LaunchPlan((sys.executable, "-c", MODELS_ONLY_SERVER, "{port}"), startup_timeout=20, poll_interval=0.05,
                      health_path=MODELS_PATH)
    with running_server(plan) as url:
        assert url.startswith("http://127.0.0.1:")


def canned(answers: dict):
    return canned_dialect(answers, "llama-cpp-python")


def test_tokenize_and_detokenize_use_the_extras_routes() -> None:
    with canned({"/extras/tokenize": {"tokens": [1, 9]}, "/extras/detokenize": {"text": "Hi"}}) as dialect:
        assert dialect.tokenize("Hi", add_special_tokens=True) == [1, 9]
        assert dialect.detokenize([9]) == "Hi"
        with pytest.raises(NotProvided, match="always adds the vocabulary's special tokens"):
            dialect.tokenize("Hi", add_special_tokens=False)
        assert Canned.requests == [("/extras/tokenize", {"input": "Hi"}), ("/extras/detokenize", {"tokens": [9]})]


def test_a_chat_is_sampled_plainly_and_a_prompt_is_not_provided() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Yo"}, "finish_reason": "length"}]}
    with canned({"/v1/chat/completions": answer}) as dialect:
        generation = dialect.generate(GenerationRequest(messages=MESSAGES, max_tokens=2, seed=3))
        with pytest.raises(NotProvided, match="only chat completions"):
            dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=2))
    assert (generation.text, generation.ids, generation.finish_reason) == ("Yo", None, "length")
    ((path, body),) = Canned.requests
    assert path == "/v1/chat/completions" and {key: body[key] for key in SAMPLING} == SAMPLING
    assert (body["messages"], body["max_tokens"], body["seed"]) == (MESSAGES, 2, 3)


@pytest.fixture(scope="module")
def chat_adapter():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (nox -s server_llama_cpp_python)")
    from textbound.adapters import llama_cpp_python_chat
    return llama_cpp_python_chat


def test_the_formatter_renders_what_the_server_passes_it(chat_adapter) -> None:
    template = ("{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}|{{ m.reasoning_content }};"
                "{% endfor %}{% if add_generation_prompt %}A:{% endif %}")
    messages = [{"role": "assistant", "content": "a", "reasoning_content": "r"}]
    # reasoning_content is not a field of the server's assistant message: dropped; the generation
    # prompt is always added (the formatter's default)
    assert chat_adapter.render_chat(template, messages, add_generation_prompt=False, bos_token="<s>") == \
        "<s>assistant:a|;A:"
    assert messages == [{"role": "assistant", "content": "a", "reasoning_content": "r"}]


def test_the_server_refusals_and_template_errors_are_raised(chat_adapter) -> None:
    with pytest.raises(ValueError, match=r"refuses the request \(422\): messages\.0"):
        chat_adapter.render_chat("{{ messages }}", [{"role": "developer", "content": "x"}])
    with pytest.raises(ValueError, match="^no$"):  # raise_exception is a ValueError, not jinja2's TemplateError
        chat_adapter.render_chat("{{ raise_exception('no') }}", MESSAGES)
