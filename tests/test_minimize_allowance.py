"""A failing run costs about what a passing one does: a worker minimizes the first few
divergences of a signature and family in each chunk, and records the rest as found, saying so in the report."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from textbound.cli import EXIT_DIVERGED, main
from textbound.naming.divergence import Case, Divergence
from textbound.run.pool import MINIMIZED_PER_SIGNATURE, NOT_MINIMIZED, MinimizingAllowance
from textbound.run.runner import CHUNK


def _divergence(text: str) -> Divergence:
    return Divergence(Case("tokenizer", "encode", "gpt2", {"text": text}), [1], [2], "ids differ at Nd")


def test_the_allowance_grants_the_first_few_of_a_signature_then_marks_the_rest():
    allowance = MinimizingAllowance(per_signature=2)
    found = [_divergence(str(n)) for n in range(4)]
    assert [allowance.grants(d) for d in found] == [True, True, False, False]
    assert found[2].first_difference["minimization"].startswith(NOT_MINIMIZED)
    assert "minimization" not in found[0].first_difference


def test_the_allowance_stops_when_a_signature_has_spent_its_seconds():
    allowance = MinimizingAllowance(per_signature=5, seconds=1.0)
    first = _divergence("1")
    assert allowance.grants(first)
    allowance.took(first, 1.5)
    later = _divergence("2")
    assert allowance.left(later) < 0 and not allowance.grants(later)
    assert "for 2 s" in later.first_difference["minimization"]


def test_a_broken_impl_minimizes_a_few_per_signature_and_the_report_counts_the_rest(tmp_path):
    code = main(["check", "--impl", "tests.broken_impl", "--family", "gpt2", "--component", "tokenizer",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    assert code == EXIT_DIVERGED
    records = [json.loads(line) for line in (tmp_path / "divergences.jsonl").read_text().splitlines()]
    marked = [r for r in records if str(r["first_difference"].get("minimization", "")).startswith(NOT_MINIMIZED)]
    assert marked and all(r["minimized_input"] == r["input"] for r in marked)
    tried = Counter((r["family"], r["signature"]) for r in records if r not in marked)
    chunks = -(-sum(c["cases"] for c in json.loads((tmp_path / "summary.json").read_text())["counts"]) // CHUNK)
    assert tried and max(tried.values()) <= MINIMIZED_PER_SIGNATURE * chunks
    summary = json.loads((tmp_path / "summary.json").read_text())
    counted = Counter((r["family"], r["signature"]) for r in marked)
    assert {(e["family"], e["signature"]): e["count"] for e in summary["not_minimized"]} == counted
    report = (tmp_path / "report.md").read_text()  # counted as found, not as not checked
    assert "## Found, not minimized" in report and not any("not minimized" in n for n in summary["notes"])
    for (family, signature), count in counted.items():
        assert f"- {signature} on {family}: {count}" in report


def test_a_candidate_the_check_raises_on_is_not_kept_and_the_divergence_is_minimized(monkeypatch):
    """A reference crashing on a shrunk input (an oracle failure) must not end the chunk in a harness
    error: the candidate is passed over and the shrinking goes on."""
    from textbound.checks import registry
    from textbound.shrinking.minimize import minimize

    def check(subject, case):
        text = case.input["text"]
        if len(text) < 3:
            raise TypeError("the reference cannot read this")
        return Divergence(case, [1], [2], "ids differ") if "x" in text else None

    monkeypatch.setitem(registry.CHECKS, ("tokenizer", "encode"), check)
    oracle_only = registry.Subject("gpt2", Path("."), impl=None)  # the check asks nothing of either side
    found = minimize(oracle_only, check(None, Case("tokenizer", "encode", "gpt2", {"text": "aaaxaaaa"})))
    assert found.minimized is not None and 3 <= len(found.minimized.input["text"]) < len("aaaxaaaa")
    assert "x" in found.minimized.input["text"]
