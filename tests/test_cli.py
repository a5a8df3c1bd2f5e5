"""The command line: exit codes, reports, baselines, and catching a broken implementation."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main

FAMILY = "gpt2"  # a small embedded family


def run_cli(*args: str) -> int:
    return main(list(args))


def test_unknown_component_is_a_setup_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("check", "--component", "tokeniser")
    assert exit_info.value.code == 2
    assert "unknown component tokeniser" in capsys.readouterr().err


def test_component_without_checks_is_a_setup_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("textbound.checks.checked_components", lambda: ["tokenizer"])
    assert run_cli("check", "--component", "chat", "--family", FAMILY, "--report-dir", str(tmp_path)) == EXIT_SETUP
    assert "no checks exist yet for chat" in capsys.readouterr().err


def test_unknown_family_is_a_setup_error(tmp_path, capsys):
    assert run_cli("check", "--family", "no-such-family", "--report-dir", str(tmp_path)) == EXIT_SETUP
    assert "unknown family no-such-family" in capsys.readouterr().err


def test_unimportable_impl_is_a_setup_error(tmp_path, capsys):
    assert run_cli("check", "--impl", "no_such_module", "--family", FAMILY,
                   "--report-dir", str(tmp_path)) == EXIT_SETUP
    assert "cannot import" in capsys.readouterr().err


def test_corrupt_baseline_is_a_setup_error(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"entries": [{"signature": "x"}]}')
    assert run_cli("check", "--family", FAMILY, "--baseline", str(baseline),
                   "--report-dir", str(tmp_path / "r")) == EXIT_SETUP
    assert "needs a non-empty 'signature' and 'reason'" in capsys.readouterr().err


def test_quick_check_of_impl_passes_and_writes_a_report(tmp_path):
    code = run_cli("check", "--family", FAMILY, "--component", "tokenizer", "--budget", "quick",
                   "--jobs", "1", "--report-dir", str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == EXIT_OK, (tmp_path / "report.md").read_text()
    assert summary["new"] == [] and summary["counts"][0]["cases"] > 0
    assert "| gpt2 | tokenizer |" in (tmp_path / "report.md").read_text()


def test_broken_impl_is_caught_with_a_minimized_example(tmp_path):
    code = run_cli("check", "--impl", "tests.broken_impl", "--family", FAMILY, "--budget", "quick",
                   "--jobs", "1", "--report-dir", str(tmp_path))
    assert code == EXIT_DIVERGED
    records = [json.loads(line) for line in (tmp_path / "divergences.jsonl").read_text().splitlines()]
    encode = [r for r in records if r["property"] == "encode"]
    assert encode, "the broken encode was not caught"
    smallest = min(encode, key=lambda r: len(r["minimized_input"]["text"]))
    assert len(smallest["minimized_input"]["text"]) <= 4
    assert any(c.isdigit() for c in smallest["minimized_input"]["text"])
    assert smallest["oracle_version"].startswith("tokenizers ")
    # the stop checker is missing from the broken module: reported, not counted as passing
    report = (tmp_path / "report.md").read_text()
    assert "stops on gpt2: not provided by tests.broken_impl" in report
    assert "detokenizer on gpt2: not provided by tests.broken_impl" in report
    # the record's reproduce command replays the divergence
    replay = subprocess.run([sys.executable, "-m", "textbound.cli", *shlex.split(smallest["reproduce"])[1:]],
                            capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert replay.returncode == EXIT_DIVERGED, replay.stdout + replay.stderr


def test_baseline_marks_known_and_fixed(tmp_path):
    first = tmp_path / "first"
    run_cli("check", "--impl", "tests.broken_impl", "--family", FAMILY, "--component", "tokenizer",
            "--budget", "quick", "--jobs", "1", "--report-dir", str(first))
    signatures = json.loads((first / "summary.json").read_text())["new"]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"entries": [
        *({"signature": s, "family": FAMILY, "reason": "broken on purpose"} for s in signatures),
        {"signature": "tokenizer/decode/text differs at Lo (impl end)", "family": "*", "reason": "long gone"},
    ]}))
    code = run_cli("check", "--impl", "tests.broken_impl", "--family", FAMILY, "--component", "tokenizer",
                   "--budget", "quick", "--jobs", "1", "--baseline", str(baseline),
                   "--report-dir", str(tmp_path / "second"))
    summary = json.loads((tmp_path / "second" / "summary.json").read_text())
    assert code == EXIT_OK
    assert summary["known"] == sorted(signatures)
    assert [e["reason"] for e in summary["fixed"]] == ["long gone"]


def test_mutate_subcommand_exit_codes(capsys):
    """``textbound mutate``: 0 when the mutant is caught, 1 when missed (checked against itself as
    the base, nothing it does is new), 2 for an unknown mutant."""
    mutant = ("--mutant", "stops_within_delta", "--family", FAMILY, "--time-limit", "120")
    assert run_cli("mutate", *mutant) == EXIT_OK
    assert "mutation score: 1/1 caught" in capsys.readouterr().out
    assert run_cli("mutate", *mutant, "--base", "textbound.mutants.stops_within_delta") == EXIT_DIVERGED
    assert "NOT CAUGHT (missed) stops_within_delta" in capsys.readouterr().out
    assert run_cli("mutate", "--mutant", "no_such_mutant") == EXIT_SETUP
    assert "unknown mutant no_such_mutant" in capsys.readouterr().err


def test_properties_needing_names_the_impl_lacks_are_reported_not_provided(tmp_path):
    """A module with only render_chat: chat templates are checked on rendered text; the ids
    properties (they need a Tokenizer) are noted as not provided, never counted as passing."""
    code = run_cli("check", "--impl", "tests.render_chat_only_impl", "--component", "chat", "--family", FAMILY,
                   "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == EXIT_OK, (tmp_path / "report.md").read_text()
    checked = {p["property"]: p["cases"] for p in summary["properties"]}
    assert set(checked) == {"render"} and checked["render"] > 0
    reason = "not provided by tests.render_chat_only_impl (missing Tokenizer)"
    assert [(s.get("property"), s["reason"]) for s in summary["skipped"]] == [("ids", reason), ("sanitized_ids", reason)]
    assert f"- chat/ids on {FAMILY}: {reason}" in (tmp_path / "report.md").read_text()
    assert '<testcase classname="textbound.gpt2.chat" name="ids"' in (tmp_path / "junit.xml").read_text()


@pytest.mark.parametrize(("component", "names", "lacking"), [
    ("stops", "StopChecker", {"pipeline": "Tokenizer, IncrementalDetokenizer"}),
    ("structured", "json_schema_to_regex, tool_call_pattern, Constraint",
     {"mask": "Tokenizer", "guarantee": "Tokenizer, parse_response"}),
])
def test_a_property_calling_names_beyond_its_component_is_not_provided_without_them(tmp_path, component, names,
                                                                                    lacking):
    """stops/pipeline streams through the module's own detokenizer, structured/mask and guarantee
    build its Constraint over its Tokenizer: without those names they are not provided, never a
    divergence "raised AttributeError" nor a harness error."""
    module = tmp_path / f"only_{component}_impl.py"
    module.write_text(f"from textbound.impl import {names}\n")
    code = run_cli("check", "--impl", str(module), "--component", component, "--family", FAMILY,
                   "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path / "report"))
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert code == EXIT_OK and summary["errors"] == [], (tmp_path / "report" / "report.md").read_text()
    assert {s["property"]: s["reason"].split("(missing ")[1].rstrip(")") for s in summary["skipped"]} == lacking


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--jobs", "0", "expected a whole number of 1 or more"),
    ("--jobs", "-3", "expected a whole number of 1 or more"),
    ("--jobs", "two", "expected a whole number of 1 or more"),
    ("--max-memory", "0", "expected a whole number of 1 or more"),
    ("--case-timeout", "0", "expected a number of seconds greater than 0"),
    ("--case-timeout", "-1.5", "expected a number of seconds greater than 0"),
    ("--case-timeout", "nan", "expected a number of seconds greater than 0"),
])
def test_an_option_out_of_its_range_is_a_setup_error_naming_the_range(tmp_path, capsys, option, value, message):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("check", "--family", FAMILY, "--budget", "quick", "--report-dir", str(tmp_path), option, value)
    assert exit_info.value.code == EXIT_SETUP
    err = capsys.readouterr().err
    assert f"argument {option}" in err and message in err and "Traceback" not in err


@pytest.mark.parametrize("where", ["the folder itself", "a folder under it"])
def test_a_report_dir_that_is_a_file_is_one_line_and_nothing_is_overwritten(tmp_path, capsys, where):
    occupied = tmp_path / "occupied"
    occupied.write_text("a file the user keeps\n")
    report_dir = occupied if where == "the folder itself" else occupied / "run"
    assert run_cli("check", "--family", FAMILY, "--budget", "quick", "--component", "stops",
                   "--report-dir", str(report_dir)) == EXIT_SETUP
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"textbound: --report-dir {report_dir}: {occupied} is a file, not a folder"]
    assert occupied.read_text() == "a file the user keeps\n"


def test_an_impl_that_provides_no_component_checked_fails_the_setup(tmp_path, capsys):
    # zero cases would otherwise pass the gate: a skipped check counted as passing
    module = tmp_path / "tools_only_impl.py"
    module.write_text("from textbound.impl import OutputParser, assemble, parse_response  # the tools component alone\n")
    assert run_cli("check", "--impl", str(module), "--family", FAMILY, "--component", "tokenizer,stops",
                   "--report-dir", str(tmp_path / "r")) == EXIT_SETUP
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"textbound: --impl {module} provides none of the components checked: tokenizer (missing "
                   "Tokenizer); stops (missing StopChecker)"]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("option", ["--junit", "--markdown"])
def test_an_output_file_that_is_a_folder_fails_the_setup_before_any_case(tmp_path, capsys, option):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert run_cli("check", "--family", FAMILY, "--component", "stops", "--budget", "quick",
                   "--report-dir", str(tmp_path / "r"), option, str(folder)) == EXIT_SETUP
    assert capsys.readouterr().err.strip().splitlines() == [f"textbound: {option} {folder}: a folder, not a file"]
    assert not (tmp_path / "r").exists()


def test_output_files_get_their_folders_made(tmp_path, capsys):
    junit, markdown = tmp_path / "new" / "junit" / "j.xml", tmp_path / "new" / "md" / "summary.md"
    assert run_cli("check", "--family", FAMILY, "--component", "stops", "--budget", "quick", "--jobs", "1",
                   "--report-dir", str(tmp_path / "r"), "--junit", str(junit), "--markdown", str(markdown)) == EXIT_OK
    assert junit.is_file() and markdown.is_file()
    out = tmp_path / "baselines" / "b.json"
    assert run_cli("baseline", "--from", str(tmp_path / "r"), "--out", str(out)) == EXIT_OK
    assert json.loads(out.read_text())["entries"] == []
    assert run_cli("baseline", "--from", str(tmp_path / "r"), "--out", str(tmp_path)) == EXIT_SETUP
    assert capsys.readouterr().err.strip().splitlines() == [f"textbound: --out {tmp_path}: a folder, not a file"]


@pytest.mark.parametrize(("args", "message"), [
    (["bench", "--seconds", "0"], "argument --seconds: '0': expected a number of seconds greater than 0"),
    (["bench", "--scaling", "0,1"], "argument --scaling: '0,1': expected job counts of 1 or more, such as 1,2"),
])
def test_a_number_out_of_range_is_a_usage_error(capsys, args, message):
    with pytest.raises(SystemExit) as raised:
        run_cli(*args)
    assert raised.value.code == EXIT_SETUP and message in capsys.readouterr().err


def test_replay_of_a_case_lacking_a_field_names_it(capsys):
    case = json.dumps({"component": "tokenizer", "property": "encode", "family": FAMILY, "input": {}})
    assert run_cli("replay", "--family", FAMILY, case) == EXIT_SETUP
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["textbound: the case is not valid: tokenizer/encode reads the field 'text' of its input, "
                   "which it lacks"]


def test_a_run_that_cannot_be_set_up_says_so_in_the_ci_summary(tmp_path, capsys):
    step_summary = tmp_path / "step_summary.md"
    assert run_cli("check", "--family", "no-such-family", "--report-dir", str(tmp_path / "r"),
                   "--markdown", str(step_summary)) == EXIT_SETUP
    text = step_summary.read_text()
    assert text.startswith("### textbound check failed: not set up") and "unknown family no-such-family" in text
    assert "passed" not in text


@pytest.mark.parametrize("impl", ["mymod", "./mymod.py"])
def test_impl_is_a_module_of_the_current_folder_or_a_file_path(tmp_path, monkeypatch, impl):
    """As a user runs the `textbound` script (whose path lacks the current folder) beside mymod.py."""
    (tmp_path / "mymod.py").write_text('from textbound.impl import *\n__version__ = "mine"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "mymod", raising=False)
    assert run_cli("check", "--impl", impl, "--family", FAMILY, "--component", "stops", "--budget", "quick",
                   "--jobs", "1", "--report-dir", str(tmp_path / "report")) == EXIT_OK
    assert json.loads((tmp_path / "report" / "summary.json").read_text())["impl_version"] == "mine"


def test_the_readmes_broken_impl_runs_as_a_file_path(tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent.parent)
    monkeypatch.delitem(sys.modules, "broken_impl", raising=False)
    assert run_cli("check", "--impl", "tests/broken_impl.py", "--family", FAMILY, "--component", "tokenizer",
                   "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)) == EXIT_DIVERGED
    assert "tokenizer/encode/ids: drops tokens at the end" in json.loads((tmp_path / "summary.json").read_text())["new"]


def test_an_impl_file_that_does_not_exist_is_a_setup_error(tmp_path, capsys):
    assert run_cli("check", "--impl", "./no_such_file.py", "--family", FAMILY, "--report-dir", str(tmp_path)) == EXIT_SETUP
    assert capsys.readouterr().err.strip() == ("textbound: --impl ./no_such_file.py: cannot import: ImportError: "
                                               "no such file no_such_file.py")


def test_a_missing_allow_file_of_compare_is_named_by_its_option(tmp_path, capsys):
    from textbound.families import build_family
    folder = str(build_family(FAMILY))
    assert run_cli("compare", folder, folder, "--allow", str(tmp_path / "absent.json"),
                   "--report-dir", str(tmp_path / "r")) == EXIT_SETUP
    assert capsys.readouterr().err.strip().splitlines() == [
        f"textbound compare: --allow {tmp_path / 'absent.json'}: no such file"]
