"""Divergences explained by the mutation catalogue: a mutant reproducing a record's actual output
on its minimized input explains it, and ``textbound triage`` says so."""
from __future__ import annotations

import json

from textbound.checks import Subject, run_check
from textbound.cli import main
from textbound.families import build_family
from textbound.naming.divergence import Case
from textbound.naming.signatures import signature_groups
from textbound.plan.implementation import Implementation
from textbound.records.run_folder import load_run
from textbound.triage.causes import root_causes, triage_text
from textbound.triage.explanation import explaining_mutants


def test_a_run_of_a_mutant_is_explained_by_that_mutant(tmp_path, capsys):
    main(["check", "--impl", "textbound.mutants.tokenizer_nfc_skipped", "--family", "qwen", "--component", "tokenizer",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    run = load_run(tmp_path)
    assert run.records
    assert "explained by" not in triage_text(run)
    capsys.readouterr()
    assert main(["triage", str(tmp_path)]) == 0
    assert "1. explained by tokenizer_nfc_skipped (the NFC normalizer skipped)\n   1 signature(s), " \
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


def test_signatures_one_class_explains_are_one_root_cause(tmp_path, capsys):
    main(["check", "--impl", "textbound.mutants.stops_within_delta", "--family", "gpt2", "--component", "stops",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    run = load_run(tmp_path)
    assert {r["signature"] for r in run.records} == set(WITHIN_DELTA)
    families = run.summary["families"]
    causes = root_causes(signature_groups(run.records), families, explain=True)
    assert len(causes) == 1 and [m.name for m in causes[0].mutants] == ["stops_within_delta"]
    assert {g.signature for g in causes[0].groups} == set(WITHIN_DELTA)
    capsys.readouterr()
    assert main(["triage", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"2 signature(s) in 1 root cause(s), {len(run.records)} divergence(s)" in out
    assert (f"1. explained by stops_within_delta (a stop string split across deltas missed)\n"
            f"   2 signature(s), {len(run.records)} divergence(s): gpt2 ({len(run.records)})\n") in out
    for signature in WITHIN_DELTA:
        count = sum(r["signature"] == signature for r in run.records)
        assert f"\n   - {signature}   NEW ({count})\n" in out
    assert "\n2. " not in out
    # Without the catalogue, each signature is its own root cause, as recorded.
    assert len(root_causes(signature_groups(run.records), families, explain=False)) == 2


def test_a_signature_the_class_does_not_reproduce_exactly_is_not_grouped_under_it(tmp_path):
    main(["check", "--impl", "textbound.mutants.stops_within_delta", "--family", "gpt2", "--component", "stops",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    jsonl = tmp_path / "divergences.jsonl"
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    for record in records:  # an output the mutant never gives: the pipeline's bug is then another one
        if record["signature"] == WITHIN_DELTA[1]:
            record["actual"]["output"] += "!"
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    run = load_run(tmp_path)
    causes = root_causes(signature_groups(run.records), run.summary["families"], explain=True)
    assert [([g.signature for g in c.groups], [m.name for m in c.mutants]) for c in causes] == [
        ([WITHIN_DELTA[0]], ["stops_within_delta"]), ([WITHIN_DELTA[1]], [])]
    text = triage_text(run, explain=True)
    assert "2 signature(s) in 2 root cause(s)" in text
    assert f"2. {WITHIN_DELTA[1]}   NEW\n" in text and "   not explained by the mutation catalogue\n" in text
