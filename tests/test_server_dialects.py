"""The vllm and openai dialects against the fake vLLM server: a clean fake agrees with the oracles
(tokenizers, transformers), streamed = non-streamed, and each output bug of the fake is visible
through the dialect, so the server checks built on them have something to catch."""
from __future__ import annotations

import json
from contextlib import contextmanager

import jsonschema
import pytest

from textbound.oracles.chat_oracle import FamilyChatOracle
from textbound.oracles.tokenizers_oracle import TokenizersOracle
from tests.fake_vllm_server import OUTPUT_BUGS, FakeVllmServer
from textbound.families.embedded import build_family
from textbound.server.dialect import GenerationRequest, NotProvided, ServerError, open_dialect

TEXTS = ["Hello world", "  leading spaces and trailing  ", "naïve café 😀 ok", "a\nb\n\nc", "<|im_start|>x"]
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 5},
                                           "days": {"type": "integer", "minimum": 1, "maximum": 9},
                                           "metric": {"type": "boolean"}},
          "required": ["city", "days"]}
TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": SCHEMA}},
         {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}}]
NAMED = {"type": "function", "function": {"name": "weather"}}
JSON_FORMAT = {"type": "json_schema", "json_schema": {"name": "forecast", "schema": SCHEMA}}


@pytest.fixture(scope="module", params=["qwen", "llama3", "sentencepiece"])
def family(request):
    return request.param, build_family(request.param)


@pytest.fixture(scope="module")
def clean(family):
    with FakeVllmServer(family[1]) as server:
        yield open_dialect("vllm", server.url, model="fake", timeout=5)


@contextmanager
def served(bugs: set[str], name: str = "vllm"):
    """A dialect on a fake qwen server with ``bugs``."""
    with FakeVllmServer(build_family("qwen"), bugs=bugs) as server:
        yield open_dialect(name, server.url, model="fake", timeout=5)


def both(dialect, **fields):
    """The same request non-streamed and streamed."""
    return (dialect.generate(GenerationRequest(**fields, stream=False)),
            dialect.generate(GenerationRequest(**fields, stream=True)))


def test_tokenize_and_detokenize_are_the_oracles(family, clean):
    oracle = TokenizersOracle.from_dir(family[1])
    for text in TEXTS:
        for special in (False, True):
            assert clean.tokenize(text, add_special_tokens=special) == oracle.encode(text, special), (text, special)
        ids = oracle.encode(text, True)
        assert clean.detokenize(ids) == oracle.decode(ids, False)


def test_chat_ids_are_transformers(family, clean):
    oracle = FamilyChatOracle.of(family[1])
    assert clean.chat_ids(MESSAGES) == oracle.ids(MESSAGES, None, False, add_generation_prompt=True)
    assert clean.chat_ids(MESSAGES, add_generation_prompt=False) == oracle.ids(MESSAGES, None, False)


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("prompt", ["Once upon", None], ids=["completion", "chat"])
def test_a_stream_is_its_chunks_and_the_whole_answer(family, clean, seed, prompt):
    fields = {"prompt": prompt} if prompt else {"messages": MESSAGES}
    whole, streamed = both(clean, **fields, max_tokens=12, seed=seed)
    assert streamed.text == "".join(chunk.text for chunk in streamed.chunks)
    assert all(chunk.ids is not None for chunk in streamed.chunks[1 if not prompt else 0:])
    assert (whole.text, whole.ids, whole.finish_reason, whole.stop_reason, whole.prompt_ids) == \
        (streamed.text, streamed.ids, streamed.finish_reason, streamed.stop_reason, streamed.prompt_ids)
    assert len(whole.ids) == 12 and whole.finish_reason == "length"
    assert whole.text == TokenizersOracle.from_dir(family[1]).decode(list(whole.ids), True)
    assert whole.request["path"] == ("/v1/completions" if prompt else "/v1/chat/completions")
    assert whole.request["body"]["return_token_ids"] is True


def test_seeds_give_other_outputs(clean):
    outputs = {clean.generate(GenerationRequest(prompt="Hi", max_tokens=8, seed=seed)).ids for seed in range(4)}
    assert len(outputs) == 4


def test_a_stop_string_ends_the_text(clean):
    free = clean.generate(GenerationRequest(prompt="Hi", max_tokens=16, seed=3))
    stop = free.text[5:7]
    for include in (False, True):
        whole, streamed = both(clean, prompt="Hi", max_tokens=16, seed=3, stop=(stop,),
                               include_stop_str_in_output=include)
        cut = free.text.index(stop) + (len(stop) if include else 0)
        assert whole.text == streamed.text == free.text[:cut]
        assert whole.finish_reason == streamed.finish_reason == "stop"
        assert whole.stop_reason == streamed.stop_reason == stop


@pytest.mark.parametrize("choice", ["required", NAMED], ids=["required", "named"])
def test_forced_tool_calls_are_valid_and_stream_the_same(clean, choice):
    whole, streamed = both(clean, messages=MESSAGES, tools=TOOLS, tool_choice=choice, max_tokens=200, seed=2)
    assert whole.tool_calls and whole.tool_calls == streamed.tool_calls
    assert streamed.finish_reason == whole.finish_reason == "tool_calls"
    for call in whole.tool_calls:
        schema = next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == call["function"]["name"])
        jsonschema.validate(json.loads(call["function"]["arguments"]), schema)
    if choice is NAMED:
        assert {call["function"]["name"] for call in whole.tool_calls} == {"weather"}


def test_json_output_is_valid_for_the_schema(clean):
    whole, streamed = both(clean, messages=MESSAGES, response_format=JSON_FORMAT, max_tokens=200, seed=5)
    assert whole.text == streamed.text
    jsonschema.validate(json.loads(whole.text), SCHEMA)


def test_a_misbehaving_server_raises_with_the_request():
    with served({"status_500"}) as dialect, pytest.raises(ServerError) as raised:
        dialect.generate(GenerationRequest(prompt="Hi", stream=True))
    assert raised.value.what.startswith("status 500") and raised.value.request["body"]["stream"] is True


def test_openai_has_chat_completions_only():
    with served(set(), "openai") as dialect:
        for operation in (lambda: dialect.tokenize("x"), lambda: dialect.detokenize([1]),
                          lambda: dialect.chat_ids(MESSAGES), lambda: dialect.chat_text(MESSAGES),
                          lambda: dialect.generate(GenerationRequest(prompt="Hi")),
                          lambda: dialect.generate(GenerationRequest(messages=MESSAGES, skip_special_tokens=False))):
            with pytest.raises(NotProvided):
                operation()
        whole, streamed = both(dialect, messages=MESSAGES, max_tokens=10, seed=1)
    assert whole.ids is None and streamed.ids is None and whole.text == streamed.text
    assert "return_token_ids" not in whole.request["body"]


def test_a_stream_without_done_is_a_server_error_for_openai_and_read_whole_by_transformers_serve():
    with served({"no_done"}, "openai") as dialect, pytest.raises(ServerError) as raised:
        dialect.generate(GenerationRequest(messages=MESSAGES, max_tokens=10, seed=1, stream=True))
    assert raised.value.what.endswith("without data: [DONE]")
    for bugs, missing_end in ((set(), None), ({"no_done"}, "[DONE]")):
        with served(bugs, "transformers-serve") as dialect:
            whole, streamed = both(dialect, messages=MESSAGES, max_tokens=10, seed=1)
            with pytest.raises(NotProvided):
                dialect.tokenize("x")
        assert streamed.text == whole.text and streamed.finish_reason == whole.finish_reason == "length"
        assert (whole.missing_end, streamed.missing_end) == (None, missing_end)


# Each output bug, as a dialect sees it: what the clean fake does that the buggy one does not.
def _prompt_ids(d):
    return d.tokenize("Hello world") == d.tokenize("Hello world", add_special_tokens=False) and \
        d.tokenize("Hello world") == TokenizersOracle.from_dir(build_family("qwen")).encode("Hello world")


def _decoded(d, **fields):
    whole, streamed = both(d, **fields)
    oracle = TokenizersOracle.from_dir(build_family("qwen"))
    shown, final = "", oracle.decode(list(streamed.ids), True)
    prefixes = []
    for chunk in streamed.chunks:
        shown += chunk.text
        prefixes.append(final.startswith(shown))
    return whole, streamed, final, all(prefixes)


def _stop(d):
    free = d.generate(GenerationRequest(prompt="Hi", max_tokens=16, seed=3))
    whole, streamed = both(d, prompt="Hi", max_tokens=16, seed=3, stop=(free.text[5:7],))
    return whole.text == free.text[:free.text.index(free.text[5:7])] and whole.stop_reason == free.text[5:7]


def _tools(d, bug_free_key):
    whole, streamed = both(d, messages=MESSAGES, tools=TOOLS, tool_choice=NAMED, max_tokens=200, seed=2)
    if bug_free_key == "deltas":
        return whole.tool_calls == streamed.tool_calls
    try:
        jsonschema.validate(json.loads(whole.tool_calls[0]["function"]["arguments"]), SCHEMA)
    except (jsonschema.ValidationError, IndexError):
        return False
    return True


def _json_output(d):
    try:
        json.loads(d.generate(GenerationRequest(messages=MESSAGES, response_format=JSON_FORMAT, max_tokens=200)).text)
    except ValueError:
        return False
    return True


HOLDS = {  # bug -> the property that holds on the clean fake and fails with the bug
    "prompt_ids": _prompt_ids,
    "chat_ids": lambda d: d.chat_ids(MESSAGES) == FamilyChatOracle.of(build_family("qwen")).ids(
        MESSAGES, None, False, add_generation_prompt=True),
    "stream_text": lambda d: _decoded(d, prompt="Hi", max_tokens=20, seed=1)[3],
    "early_replacement": lambda d: all(_decoded(d, prompt="Hi", max_tokens=24, seed=seed)[3] for seed in range(4)),
    "stream_vs_whole": lambda d: (lambda w, s: w.text == s.text)(*both(d, prompt="Hi", max_tokens=12, seed=1)),
    "stop_late": _stop,
    "stop_reason": _stop,
    "tool_deltas": lambda d: _tools(d, "deltas"),
    "invalid_arguments": lambda d: _tools(d, "arguments"),
    "invalid_json_output": _json_output,
}


def test_every_output_bug_has_a_property():
    assert set(HOLDS) == OUTPUT_BUGS


@pytest.mark.parametrize("bug", sorted(OUTPUT_BUGS))
def test_each_output_bug_breaks_its_property(bug):
    with served(set()) as dialect:
        assert HOLDS[bug](dialect), "the property must hold on the clean fake"
    with served({bug}) as dialect:
        assert not HOLDS[bug](dialect), f"{bug} must break it"
