"""``textbound baseline --from RUN_DIR``: a run's root causes as a baseline the gate then passes;
``replay`` of an oracle disagreement says so and exits 0."""
from __future__ import annotations

import json

from textbound.checks import CHECKS
from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main
from textbound.naming.baseline import load_baseline
from textbound.naming.divergence import Divergence

FAMILY = "gpt2"


def check(report_dir, *extra) -> int:
    return main(["check", "--impl", "tests.broken_impl", "--family", FAMILY, "--component", "tokenizer",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(report_dir), *extra])


def test_a_baseline_of_a_run_passes_the_next_run(tmp_path, capsys):
    assert check(tmp_path / "first") == EXIT_DIVERGED
    out = tmp_path / "baseline.json"
    assert main(["baseline", "--from", str(tmp_path / "first"), "--reason", "drops a token after digits",
                 "--out", str(out)]) == EXIT_OK
    entries = load_baseline(out)  # one per root cause, with its signatures and families
    signatures = {r["signature"] for r in map(json.loads, (tmp_path / "first" / "divergences.jsonl").open())}
    assert all(e.root_cause for e in entries) and {s for e in entries for s in e.covered} == signatures
    assert {f for e in entries for f in e.on} == {FAMILY}
    assert {e.reason for e in entries} == {"drops a token after digits"}
    assert check(tmp_path / "second", "--baseline", str(out)) == EXIT_OK
    capsys.readouterr()
    assert main(["baseline", "--from", str(tmp_path / "first")]) == EXIT_OK
    default = json.loads(capsys.readouterr().out)["entries"][0]["reason"]
    assert default.startswith(f"seen in {tmp_path / 'first'}: ") and "smallest input {" in default


def test_a_baseline_needs_a_report_folder_and_a_reason_that_says_something(tmp_path, capsys):
    assert main(["baseline", "--from", str(tmp_path)]) == EXIT_SETUP
    assert "not a report folder" in capsys.readouterr().err
    (tmp_path / "divergences.jsonl").write_text("")
    assert main(["baseline", "--from", str(tmp_path), "--reason", " "]) == EXIT_SETUP
    assert "--reason must not be empty" in capsys.readouterr().err


def test_replay_of_an_oracle_disagreement_says_so_and_exits_0(monkeypatch, capsys):
    def references_disagree(subject, case):
        return Divergence(case, [1], [2], "oracle disagreement: sentencepiece: control tokens", {})

    monkeypatch.setitem(CHECKS, ("tokenizer", "encode"), references_disagree)
    case = json.dumps({"component": "tokenizer", "property": "encode", "family": FAMILY, "input": {"text": "a"}})
    assert main(["replay", "--family", FAMILY, case]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("oracle disagreement, not impl's divergence: tokenizer/encode/oracle disagreement: ")
