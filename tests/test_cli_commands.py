"""The command line's own commands and options: --version, python -m textbound, families,
check --property, and replay taking its family from the case, from a case file, and as a JSON-lines
engine's record prints it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main
from textbound.families import build_family, embedded_family, fuzz_families, mistral_family, mistral_family_names
from textbound.oracles import versions

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "gpt2"
BROKEN_IMPL = str(ROOT / "tests" / "broken_impl.py")  # drops the last token of a text with a digit
ECHO_ENGINE = ROOT / "tests" / "engines" / "echo_engine.py"
# A case tests/broken_impl.py diverges on (gpt2 encodes "a1" as two tokens, it drops the second).
DIGIT_CASE = {"component": "tokenizer", "property": "encode", "family": FAMILY,
              "input": {"text": "a1", "add_special_tokens": False}}


def run_cli(*args: str) -> int:
    return main(list(args))


def only_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


# -- --version and python -m textbound ------------------------------------------------------------

def test_version_names_textbound_and_the_oracle_of_each_component(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("--version")
    out = capsys.readouterr().out
    assert exit_info.value.code == EXIT_OK
    assert out.splitlines()[0] == f"textbound {version('textbound')}"
    for component, oracle in versions().items():
        assert f"  {component} " in out and oracle in out, (component, out)


def test_python_m_textbound_is_the_command(tmp_path):
    """From a folder that is not the checkout, as a user without the script on PATH runs it."""
    ran = subprocess.run([sys.executable, "-m", "textbound", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == EXIT_OK, ran.stderr
    assert ran.stdout.startswith("usage: textbound ") and "replay" in ran.stdout and "init" in ran.stdout


# -- families ---------------------------------------------------------------------------------------

def listed(capsys, *args: str) -> dict[str, list[str]]:
    """``textbound families`` as name -> [source, model, checked by a run naming no family]."""
    assert run_cli("families", *args) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    header = lines[0]
    columns = [header.index(title) for title in ("source", "model", "checked")]
    rows = {}
    for line in lines[1:]:
        if line.startswith(" ") or ":" in line[:columns[0]]:
            continue  # a hint line
        cells = [line[:columns[0]], line[columns[0]:columns[1]], line[columns[1]:columns[2]], line[columns[2]:]]
        rows[cells[0].strip()] = [cell.strip() for cell in cells[1:]]
    return rows


def model_type(folder: Path) -> str:
    return json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["type"]


def test_families_lists_each_source_with_the_model_type_its_tokenizer_json_has(tmp_path, capsys, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(build_family("wordpiece"), models / "my_wordpiece")
    (models / "broken").mkdir()
    (models / "broken" / "tokenizer.json").write_text("{", encoding="utf-8")
    monkeypatch.setenv("TEXTBOUND_MODELS", str(models))
    rows = listed(capsys, "--budget", "quick", "--seed", "3")
    for name in ("gpt2", "unigram", "wordpiece", "wordlevel"):  # the built family's file is the truth
        assert rows[name] == ["embedded", model_type(embedded_family(name).path), "yes"]
    assert rows["my_wordpiece"] == ["in $TEXTBOUND_MODELS", "WordPiece", "yes"]
    assert rows["broken"][1].startswith("unreadable: ") and "not valid JSON" in rows["broken"][1]
    fuzzed = fuzz_families(3, 2, tmp_path / "fuzz")  # the quick budget's two pipelines of seed 3, trained
    assert [name for name in rows if name.startswith("fuzz-")] == ["fuzz-3-0", "fuzz-3-1"]
    for family in fuzzed:
        assert rows[family.name][:2] == ["fuzzed", model_type(family.path)]
    if "mistral-v1" in mistral_family_names():
        assert rows["mistral-v1"] == ["from mistral-common", model_type(mistral_family("mistral-v1").path),
                                      "no: --family mistral-v1"]


def test_families_says_how_to_reach_a_source_it_cannot(capsys, monkeypatch):
    monkeypatch.delenv("TEXTBOUND_MODELS", raising=False)
    assert run_cli("families", "--budget", "quick") == EXIT_OK
    out = capsys.readouterr().out
    assert "in $TEXTBOUND_MODELS: none (set $TEXTBOUND_MODELS to reach a models folder)" in out


# -- check --property ---------------------------------------------------------------------------------

def check_quick(report: Path, *args: str) -> int:
    return run_cli("check", "--family", FAMILY, "--budget", "quick", "--jobs", "1", "--report-dir", str(report), *args)


def test_property_selects_properties_and_summary_counts_only_them(tmp_path):
    """A pattern without / names the property in whichever component has it."""
    assert check_quick(tmp_path, "--property", "pipeline", "--property", "decode_stream") == EXIT_OK
    summary = json.loads((tmp_path / "summary.json").read_text())
    counted = {(p["component"], p["property"]) for p in summary["properties"] if p["cases"]}
    assert counted == {("detokenizer", "decode_stream"), ("stops", "pipeline"), ("tools", "pipeline")}
    assert {c["component"] for c in summary["counts"]} == {"detokenizer", "stops", "tools"}
    assert summary["selected_properties"] == ["detokenizer/decode_stream", "stops/pipeline", "tools/pipeline"]
    assert ("properties: detokenizer/decode_stream, stops/pipeline, tools/pipeline only"
            in (tmp_path / "report.md").read_text())


def test_a_glob_selects_a_component_s_properties(tmp_path):
    assert check_quick(tmp_path, "--property", "stops/*") == EXIT_OK
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert {p["property"] for p in summary["properties"] if p["cases"]} == {"stream", "pipeline", "interleaved"}
    # stops/server is a server's property: selected, not built for a library, and said so
    assert any(note.startswith("stops/server: selected by --property, but no case") for note in summary["notes"])


@pytest.mark.parametrize(("args", "message"), [
    (["--property", "stops/nope"], "textbound: --property stops/nope: no property of tokenizer, detokenizer, "
                                   "stops, chat, tools, structured matches it (properties: chat/ids, "),
    (["--component", "tokenizer", "--property", "stops/*"],
     "textbound: --property stops/*: no property of tokenizer matches it (properties: tokenizer/decode, "
     "tokenizer/encode, tokenizer/vocab)"),
])
def test_a_property_pattern_matching_nothing_is_one_line(tmp_path, capsys, args, message):
    assert check_quick(tmp_path / "r", *args) == EXIT_SETUP
    assert only_line(capsys).startswith(message)
    assert not (tmp_path / "r").exists()


def test_a_selection_of_which_no_case_is_built_fails_rather_than_passing_on_nothing(tmp_path, capsys):
    assert check_quick(tmp_path, "--property", "stops/server") == EXIT_SETUP
    assert capsys.readouterr().err.strip().endswith("--property stops/server: no case of stops/server was checked")


def test_a_baseline_entry_of_a_property_not_selected_is_not_called_fixed(tmp_path):
    baseline = tmp_path / "baseline.json"
    entry = {"signature": "stops/pipeline/missed a stop", "family": FAMILY, "reason": "known"}
    baseline.write_text(json.dumps({"entries": [entry]}))
    assert check_quick(tmp_path / "some", "--baseline", str(baseline), "--property", "stops/stream") == EXIT_OK
    assert json.loads((tmp_path / "some" / "summary.json").read_text())["fixed"] == []
    assert check_quick(tmp_path / "all", "--baseline", str(baseline), "--component", "stops") == EXIT_OK
    assert json.loads((tmp_path / "all" / "summary.json").read_text())["fixed"] == [entry]


# -- replay ---------------------------------------------------------------------------------------

def test_replay_takes_the_family_the_case_names(capsys):
    assert run_cli("replay", "--impl", BROKEN_IMPL, json.dumps(DIGIT_CASE)) == EXIT_DIVERGED
    assert "tokenizer/encode/ids: drops tokens at the end on gpt2" in capsys.readouterr().out
    assert run_cli("replay", json.dumps(DIGIT_CASE)) == EXIT_OK


def test_replay_of_a_case_whose_family_has_no_name_asks_for_its_folder(capsys):
    case = {**DIGIT_CASE, "family": "fuzz-0-1"}
    assert run_cli("replay", json.dumps(case)) == EXIT_SETUP
    assert only_line(capsys) == ("textbound: the case's family 'fuzz-0-1' is not one textbound knows by name "
                                 "(textbound families lists them): give its folder with --model-dir (a fuzzed "
                                 "family's is in its report's fuzz/)")


def record_line(case: dict, minimized: dict, folder: str | None = None) -> str:
    """A line as divergences.jsonl holds it (the fields replay reads, and a reproduce command)."""
    reproduce = f"textbound replay --model-dir {folder} '{{}}'" if folder else ""
    return json.dumps({**case, "signature": "tokenizer/encode/ids: drops tokens at the end",
                       "minimized_input": minimized, "reproduce": reproduce}) + "\n"


def test_replay_of_a_record_file_replays_its_minimized_input(tmp_path, capsys):
    record = tmp_path / "divergence.json"
    record.write_text(record_line({**DIGIT_CASE, "input": {"text": "abc", "add_special_tokens": False}},
                                  DIGIT_CASE["input"]))
    assert run_cli("replay", "--impl", BROKEN_IMPL, str(record)) == EXIT_DIVERGED  # "abc" alone agrees
    assert 'input {"text": "a1", "add_special_tokens": false}' in capsys.readouterr().out


def test_replay_of_a_case_file_and_of_a_record_naming_its_folder(tmp_path, capsys):
    """A record's family is the folder its reproduce command names (a fuzzed family's, under no name)."""
    folder = tmp_path / "fuzz" / "fuzz-9-0"
    shutil.copytree(build_family(FAMILY), folder)
    unnamed = {**DIGIT_CASE, "family": "fuzz-9-0"}
    (tmp_path / "record.json").write_text(record_line(unnamed, unnamed["input"], str(folder)))
    assert run_cli("replay", "--impl", BROKEN_IMPL, str(tmp_path / "record.json")) == EXIT_DIVERGED
    (tmp_path / "case.json").write_text(json.dumps(DIGIT_CASE, indent=2))
    assert run_cli("replay", "--impl", BROKEN_IMPL, str(tmp_path / "case.json")) == EXIT_DIVERGED


@pytest.mark.parametrize(("content", "message"), [
    (None, "textbound: {path}: no such file"),
    ("{}\n{}\n", "textbound: the case is not valid: {path}: 2 JSON lines (divergences.jsonl?); replay takes one: "
                 "save one line in a file of its own"),
    ('{"component": "tokenizer"', "textbound: the case is not valid: {path}: not valid JSON: line 1 column 26: "
                                  "Expecting ',' delimiter"),
])
def test_a_case_file_that_is_no_case_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "case.json"
    if content is not None:
        path.write_text(content)
    assert run_cli("replay", str(path)) == EXIT_SETUP
    assert only_line(capsys) == message.format(path=path)


def test_a_jsonl_engine_s_replay_command_runs_as_printed(tmp_path):
    """The record names the engine's command (TEXTBOUND_ENGINE_CMD=...), so the command replays it in
    a shell where the variable is not set."""
    engine = f"{sys.executable} {ECHO_ENGINE} --bug drop-last"
    environment = {**os.environ, "TEXTBOUND_ENGINE_CMD": engine}
    run = subprocess.run([sys.executable, "-m", "textbound", "check", "--impl", "textbound.adapters.jsonl_engine",
                          "--family", FAMILY, "--property", "tokenizer/encode", "--budget", "quick", "--jobs", "1",
                          "--report-dir", str(tmp_path / "report")], capture_output=True, text=True, env=environment)
    assert run.returncode == EXIT_DIVERGED, run.stderr
    record = json.loads((tmp_path / "report" / "divergences.jsonl").read_text().splitlines()[0])
    assert record["reproduce"].startswith("TEXTBOUND_ENGINE_CMD=")
    del environment["TEXTBOUND_ENGINE_CMD"]
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"  # the textbound script
    replayed = subprocess.run(["sh", "-c", record["reproduce"]], capture_output=True, text=True, env=environment)
    assert replayed.returncode == EXIT_DIVERGED, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("tokenizer/encode/ids: ")
