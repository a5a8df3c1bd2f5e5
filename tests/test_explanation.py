"""Divergences explained by the mutation catalogue: a mutant reproducing a record's actual output
on its minimized input explains it, and ``textbound triage`` says so."""
from __future__ import annotations

from textbound.checks import Subject, run_check
from textbound.cli import main
from textbound.divergence import Case
from textbound.explanation import explaining_mutants
from textbound.families import build_family
from textbound.implementation import Implementation
from textbound.triage import load_run, triage_text


def test_a_run_of_a_mutant_is_explained_by_that_mutant(tmp_path, capsys):
    main(["check", "--impl", "mutants.tokenizer_nfc_skipped", "--family", "qwen", "--component", "tokenizer",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    run = load_run(tmp_path)
    assert run.records
    assert "explained by" not in triage_text(run)
    capsys.readouterr()
    assert main(["triage", str(tmp_path)]) == 0
    assert "   explained by tokenizer_nfc_skipped (the NFC normalizer skipped)" in capsys.readouterr().out


def test_a_bug_the_catalogue_lacks_is_not_explained():
    folder = build_family("gpt2")
    case = Case("tokenizer", "decode", "gpt2", {"ids": [1010], "skip_special_tokens": False})
    found = run_check(Subject("gpt2", folder, Implementation("tests.one_bug.decode_drops_leading_space")), case)
    assert found is not None
    record = {"component": "tokenizer", "property": "decode", "family": "gpt2",
              "minimized_input": case.input, "actual": found.actual}
    assert explaining_mutants(record, {"gpt2": str(folder)}) == []
    assert explaining_mutants(record, {"gpt2": "/nonexistent"}) == []
