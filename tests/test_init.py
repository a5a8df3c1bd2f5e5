"""``textbound init``: the skeleton it writes, a Python module or a JSON-lines engine, passes the
check it prints at once (each component once per kind, on gpt2 at the quick budget), fails it once
a bug is planted, and never overwrites a file."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from textbound.adapters.jsonl_engine import ENGINE_CMD_ENV, NAME_OPS
from textbound.adapters.skeleton import CHAT_IDS_OP, ENGINE_FILE, MODULE_FILE, OP_LINES, Skeleton
from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main

KINDS = {"module": [], "jsonl": ["--jsonl"]}


@pytest.fixture
def fresh_module():
    """The module kind is loaded as ``textbound_adapter`` from its file: each test's own."""
    yield
    sys.modules.pop(Path(MODULE_FILE).stem, None)


def init(capsys, out: Path, kind: str, components: str) -> str:
    """Runs init and returns the check command it printed (its last line)."""
    assert main(["init", "--components", components, "--out", str(out), *KINDS[kind]]) == EXIT_OK
    return capsys.readouterr().out.strip().splitlines()[-1]


def run_printed(command: str, report: Path, monkeypatch) -> int:
    """The printed command, run here as a shell would (its variable set), one worker, into ``report``."""
    words = shlex.split(command)
    if "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        monkeypatch.setenv(name, value)
    assert words[0] == "textbound"
    return main([*words[1:], "--jobs", "1", "--report-dir", str(report)])


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("components", ["stops", "tokenizer,detokenizer", "chat", "tools", "structured"])
def test_the_skeleton_passes_the_check_it_prints(tmp_path, capsys, monkeypatch, fresh_module, kind, components):
    # A folder of its own: this process keeps each engine it starts by its command line, as a run does.
    command = init(capsys, tmp_path / "adapter", kind, components)
    assert f"--component {components} --family gpt2 --budget quick" in command
    assert run_printed(command, tmp_path / "report", monkeypatch) == EXIT_OK, (tmp_path / "report" / "report.md").read_text()
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert {c["component"] for c in summary["counts"] if c["cases"]} == set(components.split(","))
    assert summary["skipped"] == [] and summary["errors"] == []  # every property of them checked


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_bug_planted_in_the_skeleton_fails_its_check(tmp_path, capsys, monkeypatch, fresh_module, kind):
    """What the check runs is the skeleton: a stop checker that releases text unchecked is caught."""
    command = init(capsys, tmp_path / "adapter", kind, "stops")
    written = tmp_path / "adapter" / (ENGINE_FILE if kind == "jsonl" else MODULE_FILE)
    text = written.read_text()
    delegation = ('text = checker.add(request["delta"])' if kind == "jsonl" else "return self.engine.add(delta)")
    planted = ('checker.add(request["delta"]); text = request["delta"]' if kind == "jsonl"
               else "self.engine.add(delta); return delta")
    assert delegation in text
    written.write_text(text.replace(delegation, planted))
    assert run_printed(command, tmp_path / "report", monkeypatch) == EXIT_DIVERGED


def test_the_jsonl_skeleton_runs_by_the_command_it_prints(tmp_path, capsys):
    command = init(capsys, tmp_path / "out", "jsonl", "stops")
    variable, rest = command.split(" textbound ", 1)
    assert variable.startswith(f"{ENGINE_CMD_ENV}=") and rest.startswith("check --impl textbound.adapters.jsonl_engine ")
    [engine_command] = shlex.split(variable.split("=", 1)[1])  # one word: the variable's value
    assert shlex.split(engine_command) == [sys.executable, str(tmp_path / "out" / ENGINE_FILE)]


def test_the_module_skeleton_is_named_from_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert init(capsys, Path("."), "module", "stops").startswith(f"textbound check --impl ./{MODULE_FILE} ")
    assert init(capsys, Path("sub"), "module", "stops").startswith(f"textbound check --impl sub/{MODULE_FILE} ")


def test_every_op_of_the_protocol_has_its_line_in_the_engine_skeleton():
    """A new op in jsonl_engine.NAME_OPS without its line here would make init write an engine that
    announces less than it could, or fails to load."""
    protocol = {op for ops in NAME_OPS.values() for op in ops} | {CHAT_IDS_OP, "release"}
    assert set(OP_LINES) == protocol
    every = Skeleton(("tokenizer", "detokenizer", "stops", "chat", "tools", "structured"), True, Path("."))
    assert set(every.ops) | {"release"} == protocol
    compile(every.text(), ENGINE_FILE, "exec")


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_existing_file_is_never_overwritten(tmp_path, capsys, kind):
    existing = tmp_path / (ENGINE_FILE if kind == "jsonl" else MODULE_FILE)
    existing.write_text("mine\n")
    assert main(["init", "--out", str(tmp_path), *KINDS[kind]]) == EXIT_SETUP
    err = capsys.readouterr().err
    assert err == f"textbound: {existing} exists already: init never overwrites a file (remove it, or give --out)\n"
    assert existing.read_text() == "mine\n"


def test_an_out_folder_under_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["init", "--out", str(tmp_path / "file" / "sub")]) == EXIT_SETUP
    assert capsys.readouterr().err == f"textbound: --out {tmp_path / 'file' / 'sub'}: {tmp_path / 'file'} is a file, not a folder\n"


def test_unknown_components_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["init", "--components", "stops,tokeniser"])
    assert exit_info.value.code == EXIT_SETUP
    assert "unknown component tokeniser" in capsys.readouterr().err
