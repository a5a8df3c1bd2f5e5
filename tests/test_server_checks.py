"""The checks of a running server, against the fake vLLM server (in process, port 0): a clean fake
gives no divergence on any server property; each of its output bugs is caught by the property meant
for it; each misbehaviour is a "server error" divergence carrying the request, never minimized, and
the run goes on and counts the failed requests; ``textbound check --server`` end to end."""
from __future__ import annotations

import itertools
import json
import sys

import pytest

from tests.fake_vllm_server import MISBEHAVIOUR_BUGS, OUTPUT_BUGS, FakeVllmServer
from textbound.checks import Subject, case_source, run_check
from textbound.checks.server_output import assembled_calls, schema_problem
from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, _parser, main
from textbound.families import Family, build_family
from textbound.naming.divergence import Case
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import SERVER, Implementation
from textbound.server.dialect import Chunk, Generation
from textbound.shrinking.minimize import minimize

ADAPTER = "textbound.adapters.server"
FAMILY = "llama3"  # embedded, with a chat template of its own and characters split across byte tokens
QUICK = BUDGETS["quick"]
OUTPUT_PROPERTIES = [("detokenizer", "server_stream"), ("detokenizer", "server_specials"),
                     ("detokenizer", "server_whole"), ("stops", "server"),
                     ("tools", "server"), ("structured", "server")]
PROMPT_PROPERTIES = [("tokenizer", "encode"), ("tokenizer", "decode"), ("chat", "ids")]
# Each output bug of the fake, the property meant to catch it and how its divergence's kind begins.
CAUGHT_BY = {
    "prompt_ids": ("tokenizer", "encode", "ids"),
    "chat_ids": ("chat", "ids", "ids"),
    "stream_text": ("detokenizer", "server_stream", "shown text the decode changes: "),
    "early_replacement": ("detokenizer", "server_stream", "shown a byte run otherwise than the decode"),
    "stream_vs_whole": ("detokenizer", "server_whole", "streamed text differs from the non-streamed"),
    "stop_late": ("stops", "server", "text: keeps part of a stop string"),
    "stop_reason": ("stops", "server", "reports another stop_reason"),
    "tool_deltas": ("tools", "server", "streamed tool calls differ from the message's"),
    "invalid_arguments": ("tools", "server", "arguments invalid for the schema"),
    "invalid_json_output": ("structured", "server", "content not JSON"),
}
CASES_PER_PROPERTY = 40


@pytest.fixture(scope="module")
def family() -> Family:
    return Family(FAMILY, build_family(FAMILY), "embedded")


def server_impl(monkeypatch, url: str, timeout: str = "5", dialect: str = "vllm") -> Implementation:
    """The server adapter imported afresh for ``url`` (as a pool worker of a run against it would)."""
    monkeypatch.setenv("TEXTBOUND_SERVER_URL", url)
    monkeypatch.setenv("TEXTBOUND_SERVER_DIALECT", dialect)
    monkeypatch.setenv("TEXTBOUND_SERVER_TIMEOUT", timeout)
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    return Implementation(ADAPTER)


@pytest.fixture(autouse=True)
def fresh_adapter(monkeypatch):
    yield
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)


def servable(case: Case) -> bool:
    """Whether the fake can serve the case faithfully: it writes schema instances ignoring ``pattern``."""
    return "pattern" not in json.dumps([case.input.get("tools"), case.input.get("schema")])


def property_cases(family: Family, component: str, prop: str, count: int = CASES_PER_PROPERTY) -> list[Case]:
    cases = (case for case in case_source(family, component, QUICK, 0, source=SERVER)
             if case.property == prop and servable(case))
    return list(itertools.islice(cases, count))


def kinds(subject: Subject, cases: list[Case]) -> list[str]:
    return [found.kind for found in map(lambda case: run_check(subject, case), cases) if found]


def test_server_sources_build_every_output_property_deterministically(family):
    for component, prop in OUTPUT_PROPERTIES:
        first, again = property_cases(family, component, prop, 5), property_cases(family, component, prop, 5)
        assert first and first == again, (component, prop)


def test_a_clean_fake_server_agrees_on_every_server_property(monkeypatch, family):
    with FakeVllmServer(family.path) as server:
        impl = server_impl(monkeypatch, server.url)
        assert impl.source == SERVER
        subject = Subject(family.name, family.path, impl)
        for component, prop in PROMPT_PROPERTIES + OUTPUT_PROPERTIES:
            assert impl.missing_for(component, prop) == []
            cases = property_cases(family, component, prop)
            assert cases and kinds(subject, cases) == [], (component, prop)
            # What a server cannot be asked is not built: another template, skip_special_tokens on /detokenize.
            assert all(case.input.get("template", "family") == "family" for case in cases)
            assert not any(case.input.get("skip_special_tokens") for case in cases if component == "tokenizer")


@pytest.mark.parametrize("bug", sorted(OUTPUT_BUGS))
def test_each_output_bug_of_the_fake_is_caught_by_its_property(monkeypatch, family, bug):
    component, prop, kind = CAUGHT_BY[bug]
    with FakeVllmServer(family.path, bugs={bug}) as server:
        subject = Subject(family.name, family.path, server_impl(monkeypatch, server.url))
        cases = property_cases(family, component, prop)
        found = kinds(subject, cases)
    assert any(k.startswith(kind) for k in found), found


# The kinds one bug may give over a quick run's steered cases. stream_text doubles a letter wherever
# the steering put it: beside a byte run it is named a byte run shown otherwise, and a doubled letter
# the decode goes on differently after is named by what follows it.
MOST_KINDS = {"stream_text": 3, "early_replacement": 2, "stop_late": 2}


@pytest.mark.parametrize("bug", sorted(MOST_KINDS))
def test_one_output_bug_of_the_fake_gives_few_kinds(monkeypatch, family, bug):
    """A server's stream and stops are told by the shape of what it showed, not by the characters
    its model happened to generate."""
    component, prop, _ = CAUGHT_BY[bug]
    with FakeVllmServer(family.path, bugs={bug}) as server:
        subject = Subject(family.name, family.path, server_impl(monkeypatch, server.url))
        found = set(kinds(subject, property_cases(family, component, prop)))
    assert 1 <= len(found) <= MOST_KINDS[bug], found


@pytest.mark.parametrize("bug", sorted(MISBEHAVIOUR_BUGS))
def test_each_misbehaviour_is_a_server_error_with_its_request_never_minimized(monkeypatch, family, bug):
    with FakeVllmServer(family.path, bugs={bug}) as server:
        subject = Subject(family.name, family.path, server_impl(monkeypatch, server.url, timeout="0.5"))
        case = property_cases(family, "detokenizer", "server_stream", 1)[0]
        found = run_check(subject, case)
        assert found is not None and found.kind.startswith("server error: "), found
        assert found.first_difference["request"]["path"] == "/v1/completions"
        assert minimize(subject, found).minimized is None


def test_a_divergence_is_minimized_by_fewer_tokens_and_fewer_stop_strings(monkeypatch, family):
    with FakeVllmServer(family.path, bugs={"stream_vs_whole", "stop_late"}) as server:
        subject = Subject(family.name, family.path, server_impl(monkeypatch, server.url))
        whole = next(case for case in property_cases(family, "detokenizer", "server_whole") if case.input["max_tokens"] > 4)
        assert minimize(subject, run_check(subject, whole)).minimized.input["max_tokens"] == 1
        stops = next(case for case in property_cases(family, "stops", "server") if len(case.input["stops"]) > 1)
        assert len(minimize(subject, run_check(subject, stops)).minimized.input["stops"]) == 1


def test_a_property_whose_feature_the_dialect_lacks_is_not_provided(monkeypatch, family):
    with FakeVllmServer(family.path) as server:
        impl = server_impl(monkeypatch, server.url)
        assert impl.missing_for("tokenizer", "vocab") and impl.missing_for("chat", "sanitized_ids")
        assert impl.missing_for("chat", "render") == ["render_chat"]  # vLLM renders no chat text


@pytest.mark.parametrize(("bugs", "expected"), [(frozenset(), []), ({"stop_late"}, ["text: keeps part of a stop string"])])
def test_the_openai_dialect_is_checked_on_chats_where_it_has_no_completions(monkeypatch, family, bugs, expected):
    """OpenAI's public API: no /tokenize, no completions, no token ids; stops and streamed against
    whole are checked on the case's chat, the properties needing more are not provided."""
    with FakeVllmServer(family.path, bugs=bugs) as server:
        impl = server_impl(monkeypatch, server.url, dialect="openai")
        assert impl.missing_for("tokenizer", "encode") and impl.missing_for("detokenizer", "server_stream")
        subject = Subject(family.name, family.path, impl)
        assert impl.missing_for("stops", "server") == [] and impl.missing_for("detokenizer", "server_whole") == []
        cases = property_cases(family, "detokenizer", "server_whole", 10) + property_cases(family, "stops", "server", 10)
        found = kinds(subject, cases)
    assert sorted(set(found)) == expected


CHAT_PROPERTIES = [("detokenizer", "server_whole"), ("stops", "server"), ("tools", "server"), ("structured", "server")]
WITHOUT_DONE = "the stream ends without data: [DONE]"


def signatures(subject: Subject, family: Family, count: int) -> set[tuple[str, str, str]]:
    """The (component, property, kind) of every divergence over ``count`` cases of each chat property."""
    found = set()
    for component, prop in CHAT_PROPERTIES:
        for case in property_cases(family, component, prop, count):
            divergence = run_check(subject, case)
            if divergence:
                found.add((component, prop, divergence.kind))
    return found


@pytest.mark.parametrize(("bugs", "caught"), [({"no_done"}, set()),
                                              ({"no_done", "stop_late"}, {("stops", "server", "text: keeps part of a stop string")})])
def test_a_stream_without_done_hides_nothing_from_transformers_serve_and_is_reported_once(monkeypatch, family, bugs, caught):
    """The openai dialect sees every streamed request fail; transformers-serve's reads the streams
    whole, so the other checks run (and catch the fake's other bugs), and the missing end is one
    signature, server_whole's, on every case the rest agrees on."""
    with FakeVllmServer(family.path, bugs=bugs) as server:
        subject = Subject(family.name, family.path, server_impl(monkeypatch, server.url, dialect="openai"))
        openai = signatures(subject, family, 4)
        monkeypatch.delitem(sys.modules, ADAPTER)
        impl = server_impl(monkeypatch, server.url, dialect="transformers-serve")
        assert [impl.missing_for(*prop) for prop in CHAT_PROPERTIES] == [[]] * len(CHAT_PROPERTIES)
        whole = property_cases(family, "detokenizer", "server_whole", 6)
        whole_kinds = kinds(Subject(family.name, family.path, impl), whole)
        transformers_serve = signatures(Subject(family.name, family.path, impl), family, 6)
    assert {(component, kind.split(" after ")[0]) for component, _, kind in openai} == \
        {(component, "server error: the stream ended") for component, _ in CHAT_PROPERTIES}
    assert whole_kinds == [WITHOUT_DONE] * len(whole)
    assert transformers_serve == {("detokenizer", "server_whole", WITHOUT_DONE)} | caught


def test_the_stream_after_a_prompt_is_the_text_its_ids_add_as_decode_stream_shows_it():
    """A prompt ending in a whole byte-fallback character ("\\n" as <0x0A>): another byte would have
    made it U+FFFD, the returned id does not, so the server showed it with the prompt and shows only
    what the id adds, as tokenizers' DecodeStream primed with the prompt does (llama-server's field run)."""
    from tokenizers import Tokenizer
    from tokenizers.decoders import DecodeStream

    from textbound.checks.server_output import decoded

    family = Family("sentencepiece", build_family("sentencepiece"), "embedded")
    oracle = Tokenizer.from_file(str(family.path / "tokenizer.json"))
    prompt = [*oracle.encode("x{", add_special_tokens=False).ids, oracle.token_to_id("<0x0A>")]
    ids = [oracle.token_to_id("arg")]
    stream = DecodeStream(skip_special_tokens=True)
    for token_id in prompt:
        stream.step(oracle, token_id)
    shown = "".join(filter(None, (stream.step(oracle, token_id) for token_id in ids)))
    subject = Subject(family.name, family.path, Implementation("textbound.impl"))
    case = Case("detokenizer", "server_stream", family.name, {"prompt": prompt, "skip_special_tokens": True})
    assert decoded(subject, case.input, Generation("", tuple(ids), "length")) == shown == "arg"


def test_streamed_tool_call_deltas_assemble_by_index():
    chunks = (Chunk("", tool_call_deltas=({"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a"'}},)),
              Chunk("", tool_call_deltas=({"index": 0, "function": {"arguments": ": 1}"}},)))
    assert assembled_calls(Generation("", None, None, chunks=chunks)) == [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert schema_problem('{"a": 1}', schema) is None
    assert schema_problem('{"a": "x"}', schema) == "invalid for the schema (type)"
    assert schema_problem('{"a": 1', schema) == "not JSON"


def check_server(tmp_path, url: str, *options: str) -> int:
    return main(["check", "--server", url, "--model", "fake", "--family", FAMILY, "--budget", "quick",
                 "--jobs", "1", "--report-dir", str(tmp_path), *options])


def test_check_server_end_to_end(tmp_path, family, capsys):
    """Exit 0 on the clean fake, 1 on a buggy one (its record replays with --server), and the run
    against a failing server completes and says how many requests failed."""
    with FakeVllmServer(family.path, model="fake") as server:
        assert check_server(tmp_path / "clean", server.url, "--component", "detokenizer,stops") == EXIT_OK
    assert "failed requests: 0" in capsys.readouterr().out
    with FakeVllmServer(family.path, bugs={"stop_late"}, model="fake") as server:
        assert check_server(tmp_path / "buggy", server.url, "--component", "stops") == EXIT_DIVERGED
        record = json.loads((tmp_path / "buggy" / "divergences.jsonl").read_text().splitlines()[0])
        assert record["signature"].startswith("stops/server/text: keeps part of a stop string")
        assert f"--server {server.url} --server-dialect vllm --model fake" in record["reproduce"]
        capsys.readouterr()
        case = json.dumps({"component": "stops", "property": "server", "family": FAMILY,
                           "input": record["minimized_input"]})
        assert main(["replay", "--server", server.url, "--family", FAMILY, case]) == EXIT_DIVERGED
        assert "stops/server/text: keeps part of a stop string" in capsys.readouterr().out
    with FakeVllmServer(family.path, bugs={"status_500"}, model="fake") as server:
        assert check_server(tmp_path / "failing", server.url, "--component", "detokenizer") == EXIT_DIVERGED
    summary = json.loads((tmp_path / "failing" / "summary.json").read_text())
    assert summary["completed"] and summary["failed_requests"] > 0
    assert f"failed requests: {summary['failed_requests']};" in capsys.readouterr().out


def test_server_beside_impl_is_a_one_line_setup_error(capsys):
    assert main(["check", "--server", "http://127.0.0.1:9", "--impl", "textbound.impl", "--family", FAMILY]) == EXIT_SETUP
    assert capsys.readouterr().err.count("\n") == 1


def test_a_server_without_its_family_is_a_setup_error(tmp_path, family, capsys):
    with FakeVllmServer(family.path) as server:
        assert main(["check", "--server", server.url, "--report-dir", str(tmp_path)]) == EXIT_SETUP
    assert "give --family, --model-dir or --hub" in capsys.readouterr().err


def test_model_is_not_an_abbreviation_of_model_dir():
    args = _parser().parse_args(["check", "--model", "m", "--family", FAMILY])
    assert (args.model, args.model_dir) == ("m", [])
    with pytest.raises(SystemExit):
        _parser().parse_args(["check", "--model-d", "x"])
