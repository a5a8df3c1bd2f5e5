"""--shard K/N and merge: shards of a run merge to the same report as the run unsharded."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from textbound.cli import EXIT_DIVERGED, EXIT_SETUP, main
from textbound.families import build_family
from textbound.records.run_folder import load_run
from textbound.run.runner import Shard

SIGNATURE = "tokenizer/encode/ids: drops tokens at the end"


def test_every_chunk_belongs_to_exactly_one_shard():
    shards = [Shard.parse(f"{k}/3") for k in (1, 2, 3)]
    for component in ("tokenizer", "stops"):
        owners = [[s.index for s in shards if s.owns("gpt2", component, i)] for i in range(30)]
        assert all(len(o) == 1 for o in owners)
        assert {o[0] for o in owners} == {1, 2, 3}
    with pytest.raises(ValueError, match="K must be between 1 and N"):
        Shard.parse("4/3")


def check(report_dir: Path, *extra: str) -> int:
    """A run of tests.broken_impl on a family folder inside the report (as fuzzed pipelines are)."""
    family = report_dir / "family"
    shutil.copytree(build_family("gpt2"), family)
    baseline = report_dir.parent / "baseline.json"
    return main(["check", "--impl", "tests.broken_impl", "--model-dir", str(family), "--component",
                 "tokenizer,stops", "--budget", "quick", "--jobs", "2", "--baseline", str(baseline),
                 "--report-dir", str(report_dir), *extra])


def comparable(summary: dict) -> dict:
    return {k: summary[k] for k in ("counts", "properties", "signatures", "new", "known", "fixed", "new_in",
                                    "known_in", "checked", "skipped", "completed", "notes")}


def test_a_sharded_run_merges_to_the_unsharded_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("textbound.run.runner.CHUNK", 600)  # several chunks per component to share out
    (tmp_path / "baseline.json").write_text(json.dumps({"entries": [
        {"signature": SIGNATURE, "family": "nowhere", "reason": "another family: still new here"},
        {"signature": "tokenizer/decode/text differs at Lo (impl end)", "family": "*", "reason": "long gone"},
    ]}))
    whole, first, second, merged = (tmp_path / name for name in ("whole", "1", "2", "merged"))
    for report_dir, extra in ((whole, []), (first, ["--shard", "1/2"]), (second, ["--shard", "2/2"])):
        report_dir.mkdir()
        assert check(report_dir, *extra) == EXIT_DIVERGED
    shards = [json.loads((d / "summary.json").read_text()) for d in (first, second)]
    assert all(0 < s["counts"][0]["cases"] for s in shards) and shards[0]["counts"] != shards[1]["counts"]

    assert main(["merge", str(merged), str(first), str(second)]) == EXIT_DIVERGED
    expected, actual = load_run(whole), load_run(merged)
    assert comparable(actual.summary) == comparable(expected.summary)
    assert actual.summary["new"] == [SIGNATURE] and actual.summary["fixed"][0]["reason"] == "long gone"
    assert {r["digest"] for r in actual.records} == {r["digest"] for r in expected.records}
    # the family folder inside each shard's report is copied into the merged one, and replays from there
    assert (merged / "family" / "tokenizer.json").is_file()
    assert all(f"--model-dir {merged / 'family'} " in r["reproduce"] for r in actual.records)
    for name in ("report.md", "summary.md", "junit.xml", "report.html"):
        assert (merged / name).is_file()


def test_missing_shards_make_an_incomplete_merge_and_other_runs_cannot_merge(tmp_path, capsys):
    first = tmp_path / "1"
    first.mkdir()
    (tmp_path / "baseline.json").write_text('{"entries": []}')
    check(first, "--shard", "1/2", "--seed", "1")
    # the cases of the missing shard were never checked: the gate fails, as the merged junit.xml says
    assert main(["merge", str(tmp_path / "merged"), str(first)]) == EXIT_DIVERGED
    summary = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert summary["completed"] is False and summary["interrupted"] == "shard 2/2 of family missing"
    again = tmp_path / "1-again"  # the same shard uploaded twice would count its cases twice
    shutil.copytree(first, again)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "m-twice"), str(first), str(again)]) == EXIT_SETUP
    assert capsys.readouterr().err == (f"textbound: {again}: shard 1/2 of family is given already, as {first}; "
                                       "give each shard once\n")
    assert not (tmp_path / "m-twice").exists()
    other = tmp_path / "other"
    other.mkdir()
    check(other, "--shard", "2/2", "--seed", "2")
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "m2"), str(first), str(other)]) == EXIT_SETUP
    assert "seed differ" in capsys.readouterr().err
