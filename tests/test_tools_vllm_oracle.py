"""vLLM's parsers as the tools checks' second oracle (textbound/checks/tools_vllm.py): off without
$TEXTBOUND_VLLM_ORACLE_PYTHON; with it, where impl and the reference agree and vLLM answers otherwise
(here a stand-in engine side, tests/engines/vllm_stand_in.py, that drops reasoning into content), an
oracle disagreement of its own kind, whole and streamed, never impl's divergence; a format it refuses
no opinion; a crashing engine an oracle failure; the engine starts with a worker's family. With a real vllm environment (nox -s engine_vllm), vLLM agrees on a plain call."""
from __future__ import annotations

import os
import sys

import pytest

from textbound.adapters import jsonl_engine as protocol
from textbound.adapters import vllm as vllm_adapter
from textbound.checks import run_check, tools_vllm
from textbound.naming.divergence import Case
from textbound.run.pool import loaded

from .families import family_path, impl_subject
from .parser_engines import HERMES_CALL, WEATHER

FAMILY = "gpt2"
STAND_IN = os.path.join(os.path.dirname(__file__), "engines", "vllm_stand_in.py")


def case(prop: str, text: str = HERMES_CALL, fmt: str = "hermes") -> Case:
    return Case("tools", prop, FAMILY, {"format": fmt, "text": text, "tools": WEATHER, "reasoning": True,
                                       "starts_in_reasoning": False, "splits": [9, 20]})


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """Points $TEXTBOUND_VLLM_ORACLE_PYTHON at a 'python' running the stand-in engine side, with
    ``options`` for it; the tools tokenizer folder is any folder (the stand-in reads none)."""
    def use(*options: str) -> None:
        python = tmp_path / "python"
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STAND_IN}" "$@" {" ".join(options)}\n')
        python.chmod(0o755)
        monkeypatch.setenv(tools_vllm.PYTHON_ENV, str(python))
        monkeypatch.setenv(vllm_adapter.TOOLS_TOKENIZER_ENV, str(family_path(FAMILY)))
    return use


@pytest.mark.parametrize("prop", ["whole", "stream"])
def test_without_the_variable_vllm_is_not_consulted(monkeypatch, prop):
    monkeypatch.delenv(tools_vllm.PYTHON_ENV, raising=False)
    assert run_check(impl_subject(FAMILY), case(prop)) is None


@pytest.mark.parametrize("prop, kind", [("whole", "oracle disagreement: vllm hermes: content differs"),
                                        ("stream", "oracle disagreement: vllm hermes: stream: content differs")])
def test_vllm_answering_otherwise_is_an_oracle_disagreement(stand_in, prop, kind):
    stand_in()
    found = run_check(impl_subject(FAMILY), case(prop))
    assert found is not None and found.kind == kind and found.is_oracle_disagreement, found and found.describe()
    assert (found.expected["content"], found.actual["content"]) == ("Hi", "<think>hm</think>Hi")
    assert found.first_difference["oracle"] == "vllm stand-in 0"


def test_where_vllm_agrees_nothing_is_recorded(stand_in):
    stand_in()
    plain = HERMES_CALL.replace("<think>hm</think>", "")
    assert run_check(impl_subject(FAMILY), case("whole", plain)) is None


def test_a_format_vllm_refuses_is_no_opinion(stand_in):
    stand_in()
    text = "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>Hi"
    assert run_check(impl_subject(FAMILY), case("whole", text, "gpt_oss")) is None


def test_the_engine_starts_while_a_worker_loads_its_family(stand_in):
    """Outside any case's clock: vLLM's engine takes a minute to import."""
    stand_in()
    started = len(protocol._ENGINES)
    loaded(impl_subject(FAMILY))
    assert len(protocol._ENGINES) == started + 1 and tools_vllm.engine().alive


def test_a_crashing_engine_is_an_oracle_failure(stand_in):
    stand_in("--exit-on-parse")
    found = run_check(impl_subject(FAMILY), case("whole"))
    assert found is not None and found.kind == "oracle failure: vllm hermes: engine failed" and found.is_oracle_disagreement


@pytest.mark.skipif(not os.environ.get(vllm_adapter.PYTHON_ENV),
                    reason=f"vLLM runs in nox -s engine_vllm (${vllm_adapter.PYTHON_ENV} is not set)")
@pytest.mark.parametrize("prop", ["whole", "stream"])
def test_vllms_hermes_parser_agrees_on_a_plain_call(monkeypatch, prop):
    monkeypatch.setenv(tools_vllm.PYTHON_ENV, os.environ[vllm_adapter.PYTHON_ENV])
    assert run_check(impl_subject(FAMILY), case(prop)) is None
