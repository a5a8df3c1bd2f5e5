"""SGLang's model gateway (smg): the smg dialect's requests and readings (against canned answers
shaped as smg 1.13.0's: /v1/tokenize, /v1/detokenize, SGLang's native /generate), the fake worker's
seeded draw (engines/smg/serve.py), and, where smg's environment is named ($TEXTBOUND_SMG_PYTHON;
nox -s server_smg), the real router before that worker: its ids are the oracles'."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from tests.canned_server import Canned, canned as canned_dialect
from textbound.server.dialect import GenerationRequest, NotProvided, ServerError, open_dialect
from textbound.server.launch import running_server

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "Hi"}]
SMG_PYTHON = os.environ.get("TEXTBOUND_SMG_PYTHON", "")


def serve_module():
    """engines/smg/serve.py, whose worker parts import nothing of smg's until served."""
    spec = importlib.util.spec_from_file_location("smg_serve", ROOT / "engines" / "smg" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def canned(answers: dict):
    return canned_dialect(answers, "smg", model="m")


def native_event(text: str, ids: list[int], finish=None, matched=None, completion_tokens=2) -> dict:
    return {"text": text, "output_ids": ids, "index": 0,
            "meta_info": {"id": "gnt-1", "finish_reason": finish, "matched_stop": matched, "prompt_tokens": 2,
                          "completion_tokens": completion_tokens}}


def test_tokenize_and_detokenize_use_smg_routes() -> None:
    with canned({"/v1/tokenize": {"tokens": [9707, 1879], "count": 2, "char_count": 11},
                 "/v1/detokenize": {"text": "Hello<|im_end|>"}}) as dialect:
        assert dialect.tokenize("Hello world") == [9707, 1879]
        assert dialect.detokenize([9707, 151645]) == "Hello<|im_end|>"
        with pytest.raises(NotProvided, match="never adds the special tokens"):
            dialect.tokenize("Hi", add_special_tokens=True)
    (_, tokenize_body), (_, detokenize_body) = Canned.requests
    assert tokenize_body == {"model": "m", "prompt": "Hello world"}
    assert detokenize_body == {"model": "m", "tokens": [9707, 151645], "skip_special_tokens": False}


def test_a_streamed_generation_is_the_cumulative_text_cut_into_chunks() -> None:
    stream = [native_event("ab", [5]), native_event("abc", [6]), native_event("abc", [], "stop", 7), "[DONE]"]
    with canned({"/generate": stream}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=3, stop=("z",), stream=True,
                                                        include_stop_str_in_output=True))
    assert [chunk.text for chunk in generation.chunks] == ["ab", "c", ""]
    assert (generation.text, generation.ids) == ("abc", (5, 6))
    assert (generation.finish_reason, generation.stop_reason) == ("stop", 7)
    assert generation.usage == {"prompt_tokens": 2, "completion_tokens": 2}
    (path, body), = Canned.requests
    assert (path, body["input_ids"], body["stream"]) == ("/generate", [1, 2], True)
    assert body["sampling_params"] == {"max_new_tokens": 3, "temperature": 1.0, "skip_special_tokens": True,
                                       "no_stop_trim": True, "stop": ["z"]}


def test_a_streamed_text_that_does_not_extend_the_last_is_a_server_error() -> None:
    with canned({"/generate": [native_event("ab", [5]), native_event("x", [6]), "[DONE]"]}) as dialect:
        with pytest.raises(ServerError, match="does not extend"):
            dialect.generate(GenerationRequest(prompt="Hi", stream=True))


def test_a_whole_generation_is_the_list_of_one() -> None:
    answer = [native_event("abc", [5, 6, 7], {"type": "length", "length": 3}, completion_tokens=3)]
    with canned({"/generate": json.dumps(answer)}) as dialect:
        generation = dialect.generate(GenerationRequest(prompt="Hi", max_tokens=3))
    assert (generation.text, generation.ids, generation.finish_reason) == ("abc", (5, 6, 7), "length")
    assert generation.usage == {"prompt_tokens": 2, "completion_tokens": 3}
    assert Canned.requests[0][1]["text"] == "Hi"


def test_chat_ids_are_the_numbers_the_echoing_worker_answers() -> None:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "77091 198",
                                                   "reasoning_content": "151644 872 198"}, "finish_reason": "stop"}]}
    with canned({"/v1/chat/completions": answer}) as dialect:
        assert dialect.chat_ids(MESSAGES, continue_final_message=True, chat_template_kwargs={"t": 1}) == [
            151644, 872, 198, 77091, 198]
        with pytest.raises(NotProvided, match="generation prompt"):
            dialect.chat_ids(MESSAGES, add_generation_prompt=False)
    (path, body), = Canned.requests
    assert body["rid"].startswith("textbound-prompt-ids-") and body["rid"] != "textbound-prompt-ids-"
    assert (body["continue_final_message"], body["chat_template_kwargs"], body["model"]) == (True, {"t": 1}, "m")


def test_chat_ids_from_a_worker_that_does_not_echo_are_a_server_error() -> None:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "12 a²"},
                           "finish_reason": "length"}]}
    with canned({"/v1/chat/completions": answer}) as dialect:
        with pytest.raises(ServerError, match="not the prompt ids"):
            dialect.chat_ids(MESSAGES)


def test_a_prompt_asking_what_generate_is_not_sent_is_not_provided() -> None:
    dialect = open_dialect("smg", "http://127.0.0.1:9", model="m")
    with pytest.raises(NotProvided, match="logprobs"):
        dialect.generate(GenerationRequest(prompt="Hi", logprobs=1))
    with pytest.raises(NotProvided):
        dialect.chat_text(MESSAGES)
    assert dialect.steering == ()


def test_the_worker_draw_is_seeded_by_the_prompt_and_ends_at_a_stop_id() -> None:
    draw = serve_module().draw
    first, stop = draw([1, 2, 3], 50, 40, set())
    assert first == draw([1, 2, 3], 50, 40, set())[0] and stop is None and len(first) == 40
    assert first != draw([1, 2, 4], 50, 40, set())[0]
    ended, stop = draw([1, 2, 3], 50, 40, {first[5]})
    assert stop == first[5] and ended == first[:first.index(first[5]) + 1]


def test_the_worker_ends_at_the_family_end_ids(tmp_path: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    serve = serve_module()
    tokenizer = Tokenizer(WordLevel({"a": 0, "b": 1, "</s>": 2}, unk_token="a"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "</s>"}}))
    assert serve.end_ids(tmp_path, tokenizer) == (2,)
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [1, 2]}))
    assert serve.end_ids(tmp_path, tokenizer) == (1, 2)


# A stand-in listing the model but no tokenizer for it, as smg's router may between its two jobs.
MODEL_WITHOUT_TOKENIZER_SERVER = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
        self.wfile.write(b'{"data": [{"id":"m"}]}' if self.path == "/v1/models" else b'{"tokenizers": []}')
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_smg_is_not_ready_before_its_tokenizer_is_registered() -> None:
    from dataclasses import replace

    from textbound.server.launch import LaunchError
    from tools.serve_engine import worker_served_plan
    plan = replace(worker_served_plan("smg", Path(sys.executable), ROOT),
                   argv=(sys.executable, "-c", MODEL_WITHOUT_TOKENIZER_SERVER, "{port}"), startup_timeout=2,
                   poll_interval=0.05)
    with pytest.raises(LaunchError, match="within 2 s"):
        with running_server(plan):
            pass


@pytest.mark.skipif(not Path(SMG_PYTHON).is_file(),
                    reason="smg's environment is not named ($TEXTBOUND_SMG_PYTHON; nox -s server_smg)")
def test_the_real_router_tokenizes_renders_and_detokenizes_as_the_oracles() -> None:
    from textbound.families import FamilyError, resolve
    from textbound.oracles.chat_oracle import FamilyChatOracle
    from textbound.oracles.tokenizers_oracle import TokenizersOracle
    from tools.serve_engine import worker_served_plan
    try:
        (family,) = resolve(["qwen3"], [], [])
    except FamilyError as error:
        pytest.skip(f"the shared qwen3 family is not here: {error}")
    oracle = TokenizersOracle.from_dir(family.path)
    with running_server(worker_served_plan("smg", Path(SMG_PYTHON), family.path)) as url:
        dialect = open_dialect("smg", url, model="m", timeout=30)
        assert dialect.tokenize("Hi there") == oracle.encode("Hi there", False)
        assert dialect.chat_ids(MESSAGES) == FamilyChatOracle.of(family.path).ids(MESSAGES, None, False,
                                                                                   add_generation_prompt=True)
        generation = dialect.generate(GenerationRequest(prompt=[1, 2], max_tokens=5, stream=True))
        assert generation.finish_reason in ("length", "stop") and generation.ids
        assert dialect.detokenize(list(generation.ids)) == oracle.decode(list(generation.ids), False)
