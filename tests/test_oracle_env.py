"""Oracle libraries older than the supported ones judge nothing: ``check`` runs again in an oracle
environment with the --impl served from here over JSON lines (textbound/plan/oracle_env.py,
textbound/adapters/serve.py). The stand-in for an environment with an engine's pins is this one with
its installed versions faked; the stand-in oracle environment is this one's python, named by
$TEXTBOUND_ORACLE_PYTHON. ``nox -s oracle_env`` builds the real ones."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from textbound.adapters.jsonl_engine import ENGINE_CMD_ENV, EngineFailure
from textbound.adapters.serve import served_environment
from textbound.checks import Subject, run_check
from textbound.cli import EXIT_DIVERGED, EXIT_SETUP, main
from textbound.families import build_family
from textbound.naming.divergence import Case
from textbound.oracles import SUPPORTED_VERSIONS, unsupported
from textbound.plan.implementation import JSONL_ADAPTER, Implementation, ImplementationError
from textbound.plan.oracle_env import ENVIRONMENTS, ORACLE_PYTHON_ENV

from .test_runner_robust import interrupted_summary

ROOT = Path(__file__).resolve().parent.parent
ENGINE_PINS = {"tokenizers": "0.22.2", "transformers": "5.20.2"}  # vLLM 0.33's side
BUGGY = "tests.one_bug.decode_drops_leading_space"  # a decode bug every gpt2 tokenizer run finds
CHECK = ["check", "--family", "gpt2", "--component", "tokenizer", "--budget", "quick", "--jobs", "1"]


@pytest.fixture
def engine_pins(monkeypatch, tmp_path):
    """This environment seen with an engine's older oracle libraries, and a cache of its own."""
    monkeypatch.setattr("textbound.plan.oracle_env.installed_versions", lambda: dict(ENGINE_PINS))
    monkeypatch.setenv("TEXTBOUND_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(ORACLE_PYTHON_ENV, raising=False)


def test_older_or_missing_oracle_libraries_cannot_judge():
    assert unsupported(ENGINE_PINS) == ["tokenizers 0.22.2", "transformers 5.20.2"]
    assert unsupported({**SUPPORTED_VERSIONS, "transformers": None}) == ["transformers (not installed)"]
    assert unsupported(SUPPORTED_VERSIONS) == []
    assert unsupported({"tokenizers": "0.23.10", "transformers": "6.0.0"}) == []  # by number, not by text


def test_the_oracles_extra_asks_for_the_supported_versions():
    """pyproject's ``oracles`` extra and SUPPORTED_VERSIONS name the same releases; the oracle
    libraries are no requirement of textbound itself, so that its install keeps an engine's pins."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["optional-dependencies"]["oracles"] == [f"{n}>={v}" for n, v in SUPPORTED_VERSIONS.items()]
    assert not [r for r in project["dependencies"] if r.split(">")[0].split("=")[0] in SUPPORTED_VERSIONS]


# -- serve.py: any module over the JSON-lines protocol (test_adapters checks impl served, as echo_engine)

@pytest.fixture
def served(monkeypatch):
    """``Implementation(name)`` of ``name`` served by textbound.adapters.serve in a child process."""
    def serve(name: str) -> Implementation:
        monkeypatch.setenv(ENGINE_CMD_ENV, served_environment(name)[ENGINE_CMD_ENV])
        return Implementation(JSONL_ADAPTER)
    return serve


def test_serving_needs_only_the_core_of_textbound():
    """An engine's environment serves its module without importing the oracles or the harness."""
    code = ("import sys, textbound.adapters.serve; print(sorted(m for m in ('tokenizers', 'transformers', "
            "'textbound.oracles', 'textbound.checks', 'textbound.run') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_served_module_keeps_its_bug(served):
    engine = served(BUGGY)
    assert engine.version == f"{BUGGY} unversioned"
    case = Case("tokenizer", "decode", "gpt2", {"ids": [1010], "skip_special_tokens": False})
    assert run_check(Subject("gpt2", build_family("gpt2"), engine), case) is not None


def test_a_served_module_provides_the_names_it_has_and_no_more(served):
    engine = served("tests.render_chat_only_impl")
    assert engine.provides("chat") and engine.missing_for("chat", "ids") == ["Tokenizer"]
    assert engine.missing("tokenizer") == ["Tokenizer"] and engine.missing("stops") == ["StopChecker"]


def test_a_module_that_does_not_import_fails_the_setup_naming_it(served):
    with pytest.raises(ImplementationError, match="ModuleNotFoundError: No module named 'no_such_module'"):
        served("no_such_module")


def test_a_served_module_does_not_see_what_serves_it(served):
    """jsonl_engine itself, served, finds no engine command: it is not served again, and again."""
    with pytest.raises(ImplementationError, match="EngineMissing: textbound.adapters.jsonl_engine needs the engine's"):
        served(JSONL_ADAPTER)


def test_what_a_served_module_prints_does_not_break_the_protocol(served, tmp_path, monkeypatch):
    (tmp_path / "chatty.py").write_text("print('loading...')\nfrom textbound.impl import *  # noqa\n"
                                        "_real = Tokenizer.encode\nTokenizer.encode = lambda self, *a, **k: "
                                        "(print('encoding'), _real(self, *a, **k))[1]\n", encoding="utf-8")
    engine = served(str(tmp_path / "chatty.py"))
    assert engine.Tokenizer.from_dir(build_family("gpt2")).encode("Hi", add_special_tokens=False)


def test_a_served_impl_is_named_as_the_user_named_it(monkeypatch):
    for name, value in served_environment(BUGGY).items():
        monkeypatch.setenv(name, value)
    engine = Implementation(BUGGY)
    assert engine.name == BUGGY and engine.module.__name__ == JSONL_ADAPTER
    assert Implementation("textbound.impl").module.__name__ == "textbound.impl"  # only the one served


def test_a_crash_of_the_served_module_is_an_engine_failure(served, tmp_path):
    (tmp_path / "crashing.py").write_text("import os\nfrom textbound.impl import *  # noqa\n"
                                          "Tokenizer.decode = lambda *a, **k: os._exit(3)\n", encoding="utf-8")
    tokenizer = served(str(tmp_path / "crashing.py")).Tokenizer.from_dir(build_family("gpt2"))
    with pytest.raises(EngineFailure, match="exit status 3"):
        tokenizer.decode([1])


# -- check judged apart ------------------------------------------------------------------------

def test_check_runs_in_the_oracle_environment_and_stamps_its_versions(engine_pins, monkeypatch, tmp_path, capsys):
    """The oracles of $TEXTBOUND_ORACLE_PYTHON judge the served --impl: its bug is found, and the
    versions stamped are that environment's, not the engine's pins seen here."""
    monkeypatch.setenv(ORACLE_PYTHON_ENV, sys.executable)
    assert main([*CHECK, "--impl", BUGGY, "--report-dir", str(tmp_path / "run")]) == EXIT_DIVERGED
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["completed"] and summary["impl"] == BUGGY and summary["new"]
    assert summary["oracles"] == {"tokenizer": f"tokenizers {version('tokenizers')}"}
    assert f"- oracle for tokenizer: tokenizers {version('tokenizers')}" in (tmp_path / "run" / "report.md").read_text()
    err = capsys.readouterr().err
    assert f"tokenizers 0.22.2 and transformers 5.20.2 here do not judge: the oracles of {sys.executable} do" in err
    assert f"--impl {BUGGY} is served from here" in err


def test_replay_runs_in_the_oracle_environment_too(engine_pins, monkeypatch, capfd):
    monkeypatch.setenv(ORACLE_PYTHON_ENV, sys.executable)
    case = Case("tokenizer", "decode", "gpt2", {"ids": [1010], "skip_special_tokens": False})
    assert main(["replay", "--family", "gpt2", "--impl", BUGGY, case.to_json()]) == EXIT_DIVERGED
    assert capfd.readouterr().out.startswith("tokenizer/decode/text: drops ' ' at the start on gpt2")


def test_an_oracle_environment_with_older_oracles_is_refused(engine_pins, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ORACLE_PYTHON_ENV, sys.executable)
    for module in ("textbound.oracles", "textbound.plan.oracle_env"):
        monkeypatch.setattr(f"{module}.SUPPORTED_VERSIONS", {"tokenizers": "99.0"})
    assert main([*CHECK, "--report-dir", str(tmp_path / "run")]) == EXIT_SETUP
    [line] = capsys.readouterr().err.splitlines()
    assert line == (f"textbound: ${ORACLE_PYTHON_ENV} ({sys.executable}) has tokenizers {version('tokenizers')}: "
                    "the oracles judge at tokenizers 99.0 or newer")
    assert not (tmp_path / "run").exists()


def test_an_oracle_python_that_is_no_textbound_is_refused(engine_pins, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ORACLE_PYTHON_ENV, str(tmp_path / "no-python"))
    assert main([*CHECK, "--report-dir", str(tmp_path / "run")]) == EXIT_SETUP
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"textbound: ${ORACLE_PYTHON_ENV} ({tmp_path / 'no-python'}) cannot be run: ")


def test_without_registry_or_cache_one_line_says_how_to_provide_the_oracles(engine_pins, monkeypatch, tmp_path, capsys):
    for variable, value in {"PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}.items():
        monkeypatch.setenv(variable, value)
    assert main([*CHECK, "--report-dir", str(tmp_path / "run")]) == EXIT_SETUP
    building, failed = capsys.readouterr().err.splitlines()
    assert building.startswith("textbound: tokenizers 0.22.2 and transformers 5.20.2 here: the oracles judge at")
    assert "no environment of theirs is cached nor could be built (pip install " in failed and "No matching distribution" in failed
    pins = " ".join(f"{name}=={v}" for name, v in SUPPORTED_VERSIONS.items())
    assert failed.endswith(f"{pins}) and name its python, ENV/bin/python, in ${ORACLE_PYTHON_ENV}")
    assert list((tmp_path / "cache" / ENVIRONMENTS).iterdir()) == []  # nothing half-built is kept
    assert not (tmp_path / "run").exists()


def test_a_cached_oracle_environment_is_used_without_pip(engine_pins, monkeypatch):
    """The folder a build would publish, holding a python (this one's, run by a script), is taken as built."""
    from textbound.plan import oracle_env
    monkeypatch.setattr(oracle_env, "publish_built", lambda *_: pytest.fail("built although cached"))
    build = oracle_env.cached_build()
    build.python.parent.mkdir(parents=True)
    build.python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n', encoding="utf-8")
    build.python.chmod(0o755)
    assert oracle_env.oracles_apart().python == str(build.python)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_run_apart_as_it_stops_a_check(tmp_path, signum):
    """The signal reaches the check in the oracle environment once, through this process: it writes
    its report, and both exit 128 + the signal; the served module, stuck in a request, ends too."""
    report = tmp_path / "report"
    parent = ("import sys, textbound.plan.oracle_env as oracle_env; from textbound.cli import main; "
              f"oracle_env.installed_versions = lambda: {ENGINE_PINS!r}; sys.exit(main(sys.argv[1:]))")
    command = [sys.executable, "-c", parent, *CHECK, "--impl", "tests.hanging_impl", "--case-timeout", "600",
               "--report-dir", str(report)]
    interrupted_summary(command, report, signum, {ORACLE_PYTHON_ENV: sys.executable})
