"""Bad input, table-driven: every file a run reads, broken in each way it can be, is one line on
stderr naming the file and what is wrong, exit 2 before any case, no traceback, and nothing a
report folder held is overwritten."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from textbound.cli import EXIT_SETUP, main
from textbound.families import embedded_family


@pytest.fixture
def family_dir(tmp_path) -> Path:
    """A copy of the embedded gpt2 family's folder, to break."""
    folder = tmp_path / "family"
    shutil.copytree(embedded_family("gpt2").path, folder)
    return folder


def truncated_mid_string(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index('"', len(text) // 2) + 3], encoding="utf-8")


def vocab_a_list(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"] = list(data["model"]["vocab"])
    path.write_text(json.dumps(data), encoding="utf-8")


def run_setup_failure(capsys, *args: str) -> str:
    """Runs the command, which must fail its setup; returns its one line of stderr."""
    assert main(list(args)) == EXIT_SETUP
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.mark.parametrize(("filename", "breaking", "message"), [
    ("tokenizer.json", truncated_mid_string, "not valid JSON: line "),
    ("tokenizer.json", vocab_a_list, "$.model.vocab: expected an object, found an array (tokenizers: invalid type"),
    ("tokenizer_config.json", truncated_mid_string, "not valid JSON: line "),
])
def test_a_broken_family_file_fails_the_setup_before_any_case(tmp_path, capsys, family_dir, filename, breaking,
                                                              message):
    breaking(family_dir / filename)
    report_dir = tmp_path / "report"
    line = run_setup_failure(capsys, "check", "--model-dir", str(family_dir), "--budget", "quick",
                             "--component", "tokenizer", "--report-dir", str(report_dir))
    assert line.startswith(f"textbound: family family: {family_dir / filename}: ") and message in line
    assert not report_dir.exists()  # no case ran, nothing was written
