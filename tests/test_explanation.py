"""Divergences explained by the mutation catalogue: a mutant reproducing a record's actual output
on its minimized input explains it, a run names the root cause by it, and ``textbound triage`` says so."""
from __future__ import annotations

import pytest

from textbound.checks import Subject, run_check
from textbound.cli import main
from textbound.families import build_family
from textbound.naming.divergence import Case
from textbound.naming.signatures import signature_groups
from textbound.plan.implementation import Implementation
from textbound.records.run_folder import load_run
from textbound.triage.explanation import explaining_mutants


def test_a_run_of_a_mutant_is_explained_by_that_mutant(tmp_path, capsys):
    main(["check", "--impl", "textbound.mutants.tokenizer_nfc_skipped", "--family", "qwen", "--component", "tokenizer",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    run = load_run(tmp_path)
    assert run.records
    (cause,) = run.summary["root_causes"]
    assert cause["name"] == "tokenizer_nfc_skipped"
    assert cause["explained_by"] == [{"mutant": "tokenizer_nfc_skipped", "bug": "the NFC normalizer skipped"}]
    capsys.readouterr()
    assert main(["triage", str(tmp_path)]) == 0
    assert "1. tokenizer_nfc_skipped   NEW\n   explained by tokenizer_nfc_skipped (the NFC normalizer skipped)\n" \
        in capsys.readouterr().out


def test_a_bug_the_catalogue_lacks_is_not_explained():
    folder = build_family("gpt2")
    case = Case("tokenizer", "decode", "gpt2", {"ids": [1010], "skip_special_tokens": False})
    found = run_check(Subject("gpt2", folder, Implementation("tests.one_bug.decode_drops_leading_space")), case)
    assert found is not None
    record = {"component": "tokenizer", "property": "decode", "family": "gpt2",
              "minimized_input": case.input, "actual": found.actual}
    assert explaining_mutants(record, {"gpt2": str(folder)}) == []
    assert explaining_mutants(record, {"gpt2": "/nonexistent"}) == []


WITHIN_DELTA = ("stops/stream/releases text that may begin a stop", "stops/pipeline/releases text that may begin a stop")


@pytest.fixture(scope="module")
def within_delta(tmp_path_factory):
    report_dir = tmp_path_factory.mktemp("within_delta")
    main(["check", "--impl", "textbound.mutants.stops_within_delta", "--family", "gpt2", "--component", "stops",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(report_dir)])
    return report_dir


def test_signatures_one_class_explains_are_one_root_cause(within_delta, capsys):
    run = load_run(within_delta)
    assert {r["signature"] for r in run.records} == set(WITHIN_DELTA)
    (cause,) = run.summary["root_causes"]
    assert cause["name"] == "stops_within_delta" and cause["culprit"] == "StopChecker"
    assert {s["signature"] for s in cause["signatures"]} == set(WITHIN_DELTA)
    capsys.readouterr()
    assert main(["triage", str(within_delta)]) == 0
    out = capsys.readouterr().out
    assert f"2 signature(s) in 1 root cause(s), {len(run.records)} divergence(s)" in out
    assert (f"1. stops_within_delta   NEW\n   explained by stops_within_delta (a stop string split across deltas "
            f"missed)\n   comes from StopChecker: its oracle-backed stand-in makes the examples agree\n"
            f"   2 signature(s), {len(run.records)} divergence(s): gpt2 ({len(run.records)})\n") in out
    for signature in WITHIN_DELTA:
        count = sum(r["signature"] == signature for r in run.records)
        assert f"\n   - {signature}   NEW ({count})\n" in out
    assert "\n2. " not in out


def test_a_signature_the_class_does_not_reproduce_exactly_is_not_named_by_it(within_delta):
    run = load_run(within_delta)
    records = run.records
    for record in records:  # an output the mutant never gives: the pipeline's bug is then another one
        if record["signature"] == WITHIN_DELTA[1]:
            record["actual"]["output"] += "!"
    pipeline = next(r for r in signature_groups(records) if r.signature == WITHIN_DELTA[1]).smallest
    assert explaining_mutants(pipeline, run.summary["families"]) == []
    stream = next(r for r in signature_groups(records) if r.signature == WITHIN_DELTA[0]).smallest
    assert [m.name for m in explaining_mutants(stream, run.summary["families"])] == ["stops_within_delta"]
