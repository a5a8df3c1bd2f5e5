"""The ``--impl`` adapter of a server (textbound.adapters.server), configured by environment
variables, against the fake vLLM server: the existing tokenizer and chat ids checks pass on a clean
fake and catch its prompt-side bugs; a server that cannot be reached fails the setup in one line."""
from __future__ import annotations

import itertools
import sys

import pytest

from tests.fake_vllm_server import FakeVllmServer
from textbound.checks import Subject, case_source, run_check
from textbound.cli import EXIT_SETUP, main
from textbound.families import Family, build_family
from textbound.naming.divergence import Case
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation, ImplementationError
from textbound.server.dialect import NotProvided, ServerError

ADAPTER = "textbound.adapters.server"
FAMILY = "qwen"
MESSAGES = [{"role": "user", "content": "Hi there"}]


def adapter(monkeypatch, url: str, dialect: str = "vllm") -> Implementation:
    """The adapter imported afresh for the server at ``url`` (as a pool worker imports it)."""
    monkeypatch.setenv("TEXTBOUND_SERVER_URL", url)
    monkeypatch.setenv("TEXTBOUND_SERVER_DIALECT", dialect)
    monkeypatch.setenv("TEXTBOUND_SERVER_TIMEOUT", "5")
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    return Implementation(ADAPTER)


def tokenizer_cases(prop: str, count: int) -> list[Case]:
    embedded = Family(FAMILY, build_family(FAMILY), "embedded")
    cases = (case for case in case_source(embedded, "tokenizer", BUDGETS["quick"], 0) if case.property == prop)
    return list(itertools.islice(cases, count))


@pytest.fixture(autouse=True)
def fresh_adapter(monkeypatch):
    yield
    sys.modules.pop(ADAPTER, None)  # no later test sees this test's server


@pytest.mark.parametrize("bugs, found", [(frozenset(), False), (frozenset({"prompt_ids"}), True)],
                         ids=["clean", "prompt_ids"])
def test_the_encode_check_passes_a_clean_server_and_catches_prompt_ids(monkeypatch, bugs, found):
    with FakeVllmServer(build_family(FAMILY), bugs=bugs) as server:
        subject = Subject(FAMILY, build_family(FAMILY), adapter(monkeypatch, server.url))
        kinds = [d.kind for d in (run_check(subject, case) for case in tokenizer_cases("encode", 12)) if d]
    assert bool(kinds) == found, kinds
    assert all(kind.startswith("ids") for kind in kinds)


def test_the_decode_check_passes_where_the_server_keeps_special_tokens(monkeypatch):
    with FakeVllmServer(build_family(FAMILY)) as server:
        subject = Subject(FAMILY, build_family(FAMILY), adapter(monkeypatch, server.url))
        cases = [case for case in tokenizer_cases("decode", 30) if not case.input.get("skip_special_tokens")][:10]
        found = [run_check(subject, case) for case in cases]
        with pytest.raises(NotProvided, match="skip_special_tokens"):
            subject.tokenizer.decode([1], skip_special_tokens=True)
    assert cases and found == [None] * len(cases)


@pytest.mark.parametrize("bugs, found", [(frozenset(), False), (frozenset({"chat_ids"}), True)],
                         ids=["clean", "chat_ids"])
def test_the_chat_ids_check_catches_chat_ids(monkeypatch, bugs, found):
    case = Case("chat", "ids", FAMILY, {"template": "family", "messages": MESSAGES, "add_generation_prompt": True})
    with FakeVllmServer(build_family(FAMILY), bugs=bugs) as server:
        subject = Subject(FAMILY, build_family(FAMILY), adapter(monkeypatch, server.url))
        divergence = run_check(subject, case)
    assert (divergence is not None) == found, divergence and divergence.describe()
    assert not found or divergence.kind.startswith("ids"), divergence.kind


def test_the_adapter_names_the_server_and_offers_its_dialect(monkeypatch):
    with FakeVllmServer(build_family(FAMILY)) as server:
        impl = adapter(monkeypatch, server.url)
        assert impl.version == f"vllm server 0.33.0+fake at {server.url}"
        assert impl.dialect().name == "vllm" and impl.dialect().tokenize("Hi") == [39, 72]
        # A server's chat ids come through its Tokenizer; vLLM renders no chat text: no render_chat.
        assert impl.provides("chat") and impl.missing_for("chat", "render") == ["render_chat"]
        # Its output side (detokenizer, stops, tools, structured) is checked through its dialect.
        assert impl.source == "server" and impl.provides("tokenizer") and impl.provides("detokenizer")
        with pytest.raises(NotProvided, match="chat_template"):
            impl.Tokenizer.from_dir(build_family(FAMILY)).apply_chat_template(MESSAGES, chat_template="{{ 1 }}",
                                                                              return_dict=False)


def test_a_server_that_cannot_be_reached_fails_the_setup_in_one_line(monkeypatch):
    with FakeVllmServer(build_family(FAMILY)) as server:
        url = server.url
    with pytest.raises(ImplementationError) as raised:
        adapter(monkeypatch, url)
    assert "cannot connect" in str(raised.value) and "\n" not in str(raised.value)


def test_check_of_a_server_that_cannot_be_reached_names_its_url(tmp_path, capsys):
    with FakeVllmServer(build_family(FAMILY)) as server:
        url = server.url
    code = main(["check", "--server", url, "--family", FAMILY, "--budget", "quick", "--report-dir", str(tmp_path / "r")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_SETUP and len(lines) == 1, lines
    assert lines[0].startswith(f"textbound: --server {url}: cannot connect to {url}") and ADAPTER not in lines[0], lines
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("variable, value, message", [
    ("TEXTBOUND_SERVER_URL", "", "set TEXTBOUND_SERVER_URL"),
    ("TEXTBOUND_SERVER_DIALECT", "grpc", "unknown server dialect"),
    ("TEXTBOUND_SERVER_TIMEOUT", "soon", "not a number of seconds"),
])
def test_a_bad_configuration_fails_the_setup_in_one_line(monkeypatch, variable, value, message):
    monkeypatch.setenv("TEXTBOUND_SERVER_URL", "http://127.0.0.1:9")
    monkeypatch.setenv(variable, value)
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    with pytest.raises(ImplementationError, match=message):
        Implementation(ADAPTER)


def test_a_misbehaving_server_raises_server_error_out_of_the_tokenizer(monkeypatch):
    with FakeVllmServer(build_family(FAMILY), bugs={"status_500"}) as server:
        tokenizer = adapter(monkeypatch, server.url).Tokenizer.from_dir(build_family(FAMILY))
        with pytest.raises(ServerError) as raised:
            tokenizer.encode("Hi")
    assert raised.value.what.startswith("status 500")
    assert raised.value.request == {"method": "POST", "path": "/tokenize",
                                    "body": {"prompt": "Hi", "add_special_tokens": False}}
