"""llama.cpp's server: the launcher (with stand-in commands), the llama.cpp dialect's requests and
readings (against canned answers shaped as llama-server's), and, where a built llama-server is
found ($TEXTBOUND_LLAMA_SERVER or the cache of tools/build_llama_server.py), the real server serving
a tiny model, checked against the tokenizers and transformers oracles."""
from __future__ import annotations

import sys

import pytest

from tests.canned_server import Canned, canned as canned_dialect
from textbound.server.dialect import GenerationRequest, NotProvided, ServerError
from textbound.server.dialects.llama_cpp import LlamaCppDialect
from textbound.server.launch import LaunchError, LaunchPlan, llama_server_binary, running_server

# A stand-in server: answers GET /health with the status given, after the delay given.
HEALTH_SERVER = """
import http.server, sys, time
status, delay = int(sys.argv[2]), float(sys.argv[3])
time.sleep(delay)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(status); self.end_headers()
    def log_message(self, *args): pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def health_plan(status: int = 200, delay: float = 0.0, timeout: float = 20.0) -> LaunchPlan:
    return LaunchPlan((sys.executable, "-c", HEALTH_SERVER, "{port}", str(status), str(delay)),
                      startup_timeout=timeout, poll_interval=0.05)


def test_a_server_is_reached_while_the_block_runs_and_stopped_after() -> None:
    import urllib.error
    import urllib.request
    with running_server(health_plan(delay=0.3)) as url:
        assert url.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(url + "/health", timeout=5).status == 200
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/health", timeout=5)


def test_a_server_that_exits_is_one_error_with_its_log() -> None:
    plan = LaunchPlan((sys.executable, "-c", "import sys; print('no model at m.gguf'); sys.exit(3)", "{port}"))
    with pytest.raises(LaunchError, match=r"exited with status 3 before answering GET /health(.|\n)*no model at m.gguf"):
        with running_server(plan):
            pass


def test_a_server_never_healthy_is_stopped_and_one_error() -> None:
    with pytest.raises(LaunchError, match=r"did not answer GET /health with 200 within 8 s(.|\n)*listening"):
        with running_server(health_plan(status=503, timeout=8)):
            pass


def test_a_missing_command_is_one_error() -> None:
    with pytest.raises(LaunchError, match="cannot start /nonexistent/llama-server"):
        with running_server(LaunchPlan(("/nonexistent/llama-server", "--port", "{port}"))):
            pass




def canned(answers: dict):
    return canned_dialect(answers, "llama.cpp")


def final(content: str, tokens: list[int], stop_type: str, stopping_word: str = "") -> dict:
    return {"content": content, "tokens": tokens, "stop": True, "stop_type": stop_type, "stopping_word": stopping_word}


def test_tokenize_detokenize_and_chat_ids_send_llama_cpp_fields() -> None:
    answers = {"/tokenize": {"tokens": [1, 9]}, "/detokenize": {"content": "Hi"},
               "/apply-template": {"prompt": "<s>user: Hi"}, "/props": {"chat_template": "{{ x }}"}}
    with canned(answers) as dialect:
        assert dialect.tokenize("Hi") == [1, 9]
        assert dialect.detokenize([9]) == "Hi"
        assert dialect.chat_ids([{"role": "user", "content": "Hi"}], add_generation_prompt=False) == [1, 9]
        assert dialect.chat_template() == "{{ x }}"
        assert Canned.requests == [
            ("/tokenize", {"content": "Hi", "add_special": False, "parse_special": True}),
            ("/detokenize", {"tokens": [9]}),
            ("/apply-template", {"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": False}),
            ("/tokenize", {"content": "<s>user: Hi", "add_special": True, "parse_special": True}),
            ("/props", None)]


@pytest.mark.parametrize("stop_type, stopping_word, finish, reason", [
    ("eos", "", "stop", None), ("word", "lo", "stop", "lo"), ("limit", "", "length", None)])
def test_a_completion_reads_stop_type_and_stopping_word(stop_type, stopping_word, finish, reason) -> None:
    with canned({"/completion": final("Hel", [5, 6], stop_type, stopping_word)}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=3, seed=7, stop=("lo",)))
    assert (generation.text, generation.ids, generation.finish_reason, generation.stop_reason) == \
        ("Hel", (5, 6), finish, reason)
    ((_, body),) = Canned.requests
    assert {key: body[key] for key in ("prompt", "n_predict", "seed", "stop", "return_tokens", "top_k")} == \
        {"prompt": [1, 2], "n_predict": 3, "seed": 7, "stop": ["lo"], "return_tokens": True, "top_k": 0}
    assert generation.request == {"method": "POST", "path": "/completion", "body": body}


def test_a_streamed_completion_is_its_events_up_to_stop() -> None:
    events = [{"content": "He", "tokens": [5], "stop": False}, {"content": "", "tokens": [6], "stop": False},
              {"content": "l", "tokens": [7], "stop": False}, final("", [], "limit")]
    with canned({"/completion": events}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt="Hi", max_tokens=3, stream=True))
    assert (generation.text, generation.ids, generation.finish_reason) == ("Hel", (5, 6, 7), "length")
    assert [chunk.ids for chunk in generation.chunks] == [(5,), (6,), (7,), ()]


@pytest.mark.parametrize("events, what", [
    ([{"content": "He", "tokens": [5], "stop": False}], "without one with stop: true"),
    ([final("", [], "nonsense")], "stop_type is 'nonsense'"),
    ([{"content": 3, "tokens": [5], "stop": False}], "content is int"),
    ([{"error": {"message": "boom"}}], "error in SSE event 1")])
def test_a_malformed_stream_is_a_server_error(events, what) -> None:
    with canned({"/completion": events}) as dialect, pytest.raises(ServerError, match=what):
        dialect.generate(GenerationRequest(prompt="Hi", stream=True))


def test_chat_ids_and_stop_word_come_from_verbose() -> None:
    answer = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hel"}}],
              "__verbose": final("Hel", [5, 6], "word", "lo")}
    with canned({"/v1/chat/completions": answer}) as dialect:
        generation = dialect.generate(GenerationRequest(messages=[{"role": "user", "content": "Hi"}], stop=("lo",)))
    assert (generation.text, generation.ids, generation.finish_reason, generation.stop_reason) == \
        ("Hel", (5, 6), "stop", "lo")
    ((_, body),) = Canned.requests
    assert body["return_tokens"] is body["verbose"] is True


def test_what_llama_cpp_lacks_is_not_provided() -> None:
    with canned({}) as dialect:
        for request in (GenerationRequest(prompt="Hi", include_stop_str_in_output=True),
                        GenerationRequest(prompt="Hi", skip_special_tokens=False)):
            with pytest.raises(NotProvided):
                dialect.generate(request)
    assert Canned.requests == []


def test_a_completion_sends_logit_bias_and_n_probs_and_reads_probabilities_usage_and_slots() -> None:
    """llama-server's shapes: logit_bias as [[id, bias]], n_probs, completion_probabilities (``bytes``
    the piece sent, ``token`` its valid UTF-8 beginning), tokens_evaluated and tokens_predicted."""
    entry = {"id": 6, "token": "é", "bytes": [0xC3, 0xA9], "logprob": -0.5, "top_logprobs": []}
    answer = {**final("é", [5, 6], "limit"), "completion_probabilities": [entry], "tokens_evaluated": 2,
              "tokens_predicted": 2}
    with canned({"/completion": answer, "/props": {"total_slots": 3}}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=2, steer=(5, 6),
                                                        steer_by="logit_bias", logprobs=0))
        assert dialect.slots() == 3
        for request in (GenerationRequest(prompt="Hi", n=2), GenerationRequest(prompt="Hi", echo=True),
                        GenerationRequest(prompt="Hi", steer=(5,), steer_by="allowed_token_ids")):
            with pytest.raises(NotProvided):
                dialect.generate(request)
    (_, body), _ = Canned.requests
    assert body["logit_bias"] == [[5, 100], [6, 100]] and body["n_probs"] == 1
    assert [(e.token, e.bytes, e.id) for e in generation.logprobs] == [("é", (0xC3, 0xA9), 6)]
    assert generation.usage == {"prompt_tokens": 2, "completion_tokens": 2}


# The real server, where built.
BINARY = llama_server_binary()
needs_server = pytest.mark.skipif(BINARY is None or not BINARY.is_file(), reason=(
    "no llama-server: build it with `python tools/build_llama_server.py` (tens of minutes) or set "
    "$TEXTBOUND_LLAMA_SERVER; nox -s server_llama_cpp does both"))
TEXTS = ["Hello world", " leading space", "naïve café 😀 日本語", "<|im_end|> and <|endoftext|>", "\n\n\t x  y",
         "12345 678", "ÿ\u00a0\u200b", ""]


@pytest.fixture(scope="module")
def llama_server(request):
    from textbound.families import resolve
    from textbound.server.launch import tiny_model_plan
    (family,) = resolve([request.param], [], [])
    with running_server(tiny_model_plan(BINARY, family.path)) as url:
        yield family, LlamaCppDialect(url, timeout=60)


def _served(*names):
    from textbound.families import models_dir
    present = [name for name in names if name == "sentencepiece" or (models_dir() and (models_dir() / name).is_dir())]
    return pytest.mark.parametrize("llama_server", present, indirect=True)


@needs_server
@_served("qwen3", "llama3_1")
def test_the_server_tokenizes_as_tokenizers(llama_server) -> None:
    import tokenizers
    family, dialect = llama_server
    oracle = tokenizers.Tokenizer.from_file(str(family.path / "tokenizer.json"))
    for text in TEXTS:
        ids = oracle.encode(text, add_special_tokens=False).ids
        assert dialect.tokenize(text) == ids, text
        assert dialect.detokenize(ids) == oracle.decode(ids, skip_special_tokens=False), text


@needs_server
@_served("qwen3", "llama3_1")
def test_a_completion_streamed_is_the_same_as_whole(llama_server) -> None:
    _, dialect = llama_server
    prompt = dialect.tokenize("Hello world")
    whole = dialect.generate(GenerationRequest(prompt=prompt, max_tokens=12, seed=3))
    streamed = dialect.generate(GenerationRequest(prompt=prompt, max_tokens=12, seed=3, stream=True))
    assert whole.finish_reason in ("stop", "length") and whole.ids
    assert dialect.detokenize(list(whole.ids)).startswith(whole.text) or whole.finish_reason == "stop"
    assert streamed.text == whole.text


def test_the_tiny_model_keeps_every_tokenizer_key_and_has_llama_tensors(tmp_path) -> None:
    import gguf

    from textbound.server.tiny_model import TinyModel, tiny_gguf
    vocabulary = tmp_path / "family" / "vocab.gguf"
    vocabulary.parent.mkdir()
    writer = gguf.GGUFWriter(str(vocabulary), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "b", "ab", "<|end|>"])
    writer.add_token_types([1, 1, 1, 3])
    writer.add_token_merges(["a b"])
    writer.add_eos_token_id(3)
    writer.add_chat_template("{{ messages[0].content }}")
    writer.add_block_count(32)  # the converter's stand-in architecture: not copied
    for step in (writer.write_header_to_file, writer.write_kv_data_to_file, writer.write_tensors_to_file, writer.close):
        step()
    plan = TinyModel(n_embd=8, n_layer=2, n_head=2, n_ff=16)
    model = tiny_gguf(vocabulary, plan, cache=tmp_path / "cache")
    assert tiny_gguf(vocabulary, plan, cache=tmp_path / "cache") == model  # written once
    source, written = gguf.GGUFReader(str(vocabulary)), gguf.GGUFReader(str(model))
    tokenizer_keys = {name for name in source.fields if name.startswith("tokenizer.")}
    assert tokenizer_keys == {name for name in written.fields if name.startswith("tokenizer.")}
    assert all(written.fields[name].contents() == source.fields[name].contents() for name in tokenizer_keys)
    assert written.fields["llama.block_count"].contents() == 2
    assert written.fields["llama.vocab_size"].contents() == 4
    shapes = {tensor.name: tuple(int(n) for n in reversed(tensor.shape)) for tensor in written.tensors}
    assert shapes["token_embd.weight"] == (4, 8) and shapes["blk.1.ffn_down.weight"] == (8, 16)
    assert len(shapes) == 2 + 9 * 2


@needs_server
@_served("llama3_1")
def test_the_adapter_renders_with_the_template_variables_and_refuses_documents(llama_server, monkeypatch) -> None:
    import importlib
    import sys
    family, dialect = llama_server
    monkeypatch.setenv("TEXTBOUND_SERVER_URL", dialect.server.url)
    monkeypatch.setenv("TEXTBOUND_SERVER_DIALECT", "llama.cpp")
    monkeypatch.delitem(sys.modules, "textbound.adapters.server", raising=False)  # imported afresh, as a worker does
    adapter = importlib.import_module("textbound.adapters.server")
    template = dialect.chat_template()
    messages = [{"role": "user", "content": "Hi"}]
    text = adapter.render_chat(template, messages, add_generation_prompt=True, bos_token="<|begin_of_text|>")
    assert "Hi" in text
    assert "Hi" in adapter.render_chat(template, messages, date_string="26 Jul 2024")  # sent as chat_template_kwargs
    with pytest.raises(adapter.NotProvided, match="documents"):
        adapter.render_chat(template, messages, documents=[{"text": "a"}])
