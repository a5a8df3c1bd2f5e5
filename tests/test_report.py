"""Reports: every record is on disk as soon as it is found, and an interrupted run keeps them."""
from __future__ import annotations

import json

import pytest

from textbound.families import Family, build_family
from textbound.naming.divergence import Case
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation
from textbound.records.report import Recorder, RunInfo, ci_verdict
from textbound.run.runner import Plan, run
from textbound.shrinking.minimize import ddmin


def test_interrupted_run_keeps_what_it_found(tmp_path, monkeypatch):
    monkeypatch.setattr("textbound.run.runner.CHUNK", 2)
    family = Family("gpt2", build_family("gpt2"), "embedded")
    info = RunInfo("tests.broken_impl", "broken-1", {"tokenizer": "tokenizers"}, 0, "quick", {"gpt2": str(family.path)})
    recorder = Recorder(tmp_path, info)

    def source(family, component, budget, seed):
        for text in ["no digits here", "abc 12 def", "x9"]:
            yield Case("tokenizer", "encode", family.name, {"text": text, "add_special_tokens": False})

    def count_then_interrupt(*args):  # Ctrl-C right after the first chunk of two cases was counted
        Recorder.count(recorder, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(recorder, "count", count_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(Plan(Implementation("tests.broken_impl"), [family], ["tokenizer"], BUDGETS["quick"]), recorder,
            case_source=source)
    lines = [json.loads(line) for line in (tmp_path / "divergences.jsonl").read_text().splitlines()]
    assert "abc 12 def" in [line["input"]["text"] for line in lines]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["completed"] is False and summary["interrupted"] == "SIGINT"
    assert summary["new"] == [lines[0]["signature"]]
    assert summary["counts"][0]["cases"] == 2
    report = (tmp_path / "report.md").read_text()
    assert "INTERRUPTED (SIGINT)" in report
    assert "abc 12 def" not in report  # the smallest example is shown
    assert not list(tmp_path.glob(".*.tmp"))


def test_records_are_flushed_as_found(tmp_path):
    family = Family("gpt2", build_family("gpt2"), "embedded")
    info = RunInfo("tests.broken_impl", "broken-1", {"tokenizer": "tokenizers"}, 0, "quick", {"gpt2": str(family.path)})
    recorder = Recorder(tmp_path, info)

    def source(family, component, budget, seed):
        return iter([Case("tokenizer", "encode", family.name, {"text": "abc 12 def", "add_special_tokens": False})])

    verdict = run(Plan(Implementation("tests.broken_impl"), [family], ["tokenizer"], BUDGETS["quick"]), recorder,
                  case_source=source)
    (line,) = (tmp_path / "divergences.jsonl").read_text().splitlines()
    record = json.loads(line)
    smallest = record["minimized_input"]["text"]
    assert len(smallest) <= 3 and any(c.isdigit() for c in smallest)
    assert record["reproduce"].startswith("textbound replay --impl tests.broken_impl --model-dir ")
    assert verdict.new == [record["signature"]]
    report = (tmp_path / "report.md").read_text()
    assert record["signature"] in report and "| gpt2 | tokenizer | 1 | 1 |" in report


def test_ddmin_finds_a_one_minimal_subsequence():
    def fails(items):
        return "x" in items and "y" in items
    assert "".join(ddmin("aaaaxbbbbbbbbybbbb", fails)) == "xy"
    assert ddmin([1, 2, 3, 4, 5, 6, 7, 8], lambda s: sum(s) >= 15) in ([7, 8],)


@pytest.mark.parametrize("expected, actual", [
    ([{"name": "f", "arguments": {"x": [1]}}], [{"name": "f", "arguments": {"x": [2]}}, {"name": "g"}]),
    ([[1, 2], {"x": 1}, None], [[1, 3], "text"]),
    ([5, 6], [-1, 2 ** 70]),  # ids outside the vocabulary
    ({"calls": [{"a": 1}]}, None),
])
def test_report_md_shows_every_json_value(tmp_path, expected, actual):
    from collections import Counter

    from textbound.records.report import build_summary, markdown_report
    header = {"impl": "impl", "impl_version": "1", "oracles": {}, "seed": 0, "budget": "quick",
              "families": {"gpt2": str(build_family("gpt2"))}}
    record = {"family": "gpt2", "component": "tools", "property": "parse", "signature": "tools/parse/x",
              "input": {}, "minimized_input": {}, "expected": expected, "actual": actual,
              "first_difference": {}, "reproduce": "textbound replay ..."}
    summary = build_summary(header, Counter(), [record], {"new": ["tools/parse/x"]}, [], {})
    report = markdown_report(summary, [record])
    shown = json.dumps(actual) if isinstance(actual, (list, dict)) else repr(actual)
    assert "### 1. `tools/parse/x` (new)" in report and f"\nactual:   {shown}\n" in report


def test_oracle_disagreements_are_reported_apart_and_never_fail_the_gate(tmp_path, monkeypatch):
    """Two references disagree on the texts with a digit and impl sides with one: recorded, listed in
    their own section and count, not minimized, not new, not matched against the baseline."""
    from textbound.checks import CHECKS
    from textbound.naming.baseline import BaselineEntry
    from textbound.naming.divergence import Divergence

    tries = []

    def references_disagree(subject, case):
        tries.append(case.input["text"])
        if any(c.isdigit() for c in case.input["text"]):
            return Divergence(case, "reference A", "reference B", "oracle disagreement: A and B differ", {})
        return None

    monkeypatch.setitem(CHECKS, ("tokenizer", "encode"), references_disagree)
    monkeypatch.setattr("textbound.run.runner.CHUNK", 10)
    family = Family("gpt2", build_family("gpt2"), "embedded")
    recorder = Recorder(tmp_path, RunInfo("impl", "1", {}, 0, "quick", {"gpt2": str(family.path)}))
    texts = ["words", "abc 12 def", "x9 y"]
    signature = "tokenizer/encode/oracle disagreement: A and B differ"
    baseline = [BaselineEntry(signature, "*", "a stale entry, never matched")]

    def source(family, component, budget, seed):
        return iter([Case("tokenizer", "encode", family.name, {"text": t, "add_special_tokens": False}) for t in texts])

    verdict = run(Plan(Implementation("textbound.impl"), [family], ["tokenizer"], BUDGETS["quick"], baseline=baseline),
                  recorder, case_source=source)
    assert verdict.new == [] and verdict.known == []
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["oracle_disagreements"] == 2 and summary["signatures"] == {}
    assert summary["counts"][0]["divergences"] == 0 and summary["properties"][0]["oracle_disagreements"] == 2
    records = [json.loads(line) for line in (tmp_path / "divergences.jsonl").read_text().splitlines()]
    assert all(r["minimized_input"] == r["input"] for r in records)  # not minimized
    report = (tmp_path / "report.md").read_text()
    impl_part, disagreements_part = report.split("## Oracle disagreements")
    assert "None: every checked case agreed" in impl_part and f"### `{signature}`" in disagreements_part
    assert 'data-signature="' + signature in (tmp_path / "report.html").read_text()
    assert 'failures="0"' in (tmp_path / "junit.xml").read_text()


def test_oracle_disagreements_beyond_the_kept_ones_are_counted_not_written(tmp_path, monkeypatch):
    """A second oracle parting alike on every case writes DISAGREEMENTS_KEPT records per family and
    signature; summary.json, report.md and a merge of two such runs still count every one."""
    from textbound.naming.baseline import Verdict
    from textbound.naming.divergence import Divergence
    from textbound.records.merge import merge

    monkeypatch.setattr("textbound.records.report.DISAGREEMENTS_KEPT", 3)
    signature = "tokenizer/encode/oracle disagreement: B: control tokens"
    runs = []
    for shard, texts in enumerate([["a", "b", "c", "d", "e"], ["f", "g"]]):
        recorder = Recorder(tmp_path / f"run{shard}", RunInfo("impl", "1", {}, 0, "quick", {"gpt2": "/x"}))
        for text in texts:
            case = Case("tokenizer", "encode", "gpt2", {"text": text, "add_special_tokens": False})
            recorder.record(Divergence(case, [1], [2], "oracle disagreement: B: control tokens"))
        recorder.count("gpt2", "tokenizer", [Case("tokenizer", "encode", "gpt2", {})] * len(texts))
        recorder.write_summary(Verdict(new_in=[], known_in=[], fixed=[]), checked=[("gpt2", "tokenizer")])
        recorder.close()
        runs.append(recorder.dir)
    first = json.loads((runs[0] / "summary.json").read_text())
    assert len((runs[0] / "divergences.jsonl").read_text().splitlines()) == 3
    assert first["oracle_disagreements"] == 5 and first["oracle_disagreement_signatures"] == {signature: 5}
    assert first["properties"][0]["oracle_disagreements"] == 5 and first["properties"][0]["cases"] == 5
    assert "5 case(s) (3 written: at most 3 per family)" in (runs[0] / "report.md").read_text()
    merged = merge(tmp_path / "merged", runs)
    assert merged["oracle_disagreements"] == 7 and merged["signatures"] == {}


def test_the_cases_digest_names_the_cases_counted_not_the_order_they_came_back_in(tmp_path):
    """summary.json's cases_digest per family × component and per property: the same cases in any
    order (as chunks come back from the workers) give the same digest, one case changed another, and
    a summary.json without digests merged in gives none rather than a wrong one."""
    from textbound.records.report import Tally, build_summary

    def case(prop, text):
        return Case("tokenizer", prop, "gpt2", {"text": text, "add_special_tokens": False})

    def counted(folder, *chunks):
        recorder = Recorder(tmp_path / folder, RunInfo("impl", "1", {}, 0, "quick", {"gpt2": "/x"}))
        for chunk in chunks:
            recorder.count("gpt2", "tokenizer", chunk)
        return build_summary({}, recorder.tallies, [], {}, [], {})

    forward = counted("forward", [case("encode", "a"), case("encode", "b")], [case("decode", "c")])
    backward = counted("backward", [case("decode", "c")], [case("encode", "b"), case("encode", "a")])
    changed = counted("changed", [case("encode", "a"), case("encode", "B")], [case("decode", "c")])
    assert forward["counts"] == backward["counts"] and forward["properties"] == backward["properties"]
    (count,) = forward["counts"]
    assert count["cases"] == 3 and len(count["cases_digest"]) == 32
    assert count["cases_digest"] == (Tally.of_summary(forward["properties"][0])
                                     + Tally.of_summary(forward["properties"][1])).summary()["cases_digest"]
    assert changed["counts"][0]["cases"] == 3 and changed["counts"][0]["cases_digest"] != count["cases_digest"]
    assert changed["properties"][0] == forward["properties"][0]  # decode: the same case
    assert (Tally.of_summary({"cases": 2}) + Tally.of_summary(count)).summary() == {"cases": 5, "cases_digest": None}


def test_a_replayed_case_keeps_the_key_order_a_chat_template_saw(tmp_path):
    import shlex

    from textbound.naming.divergence import Divergence
    messages = [{"role": "user", "content": "hi", "name": "z"}, {"role": "assistant", "tool_calls": []}]
    case = Case("chat", "render", "gpt2", {"template": "t", "messages": messages, "add_generation_prompt": False})
    recorder = Recorder(tmp_path, RunInfo("impl", "1", {}, 0, "quick", {"gpt2": "/x"}))
    recorder.record(Divergence(case, "a", "b", "text differs"))
    replayed = Case.from_json(shlex.split(recorder.records[0]["reproduce"])[-1])
    assert json.dumps(replayed.input) == json.dumps(case.input)  # the same keys in the same order
    assert list(replayed.input) == ["template", "messages", "add_generation_prompt"]
    assert not recorder.record(Divergence(case, "a", "b", "text differs"))  # still de-duplicated


def test_a_kind_holding_a_slash_is_still_an_oracle_disagreement():
    from textbound.naming.divergence import is_oracle_disagreement
    kind = "oracle disagreement: outlines-core admits what anyOf/maximum forbids"
    assert is_oracle_disagreement(kind) and is_oracle_disagreement(f"structured/differential/{kind}")
    assert not is_oracle_disagreement("tokenizer/encode/ids differ at a/b")


@pytest.mark.parametrize(("prop", "kind", "signature"), [
    ("decode", "text: drops ' ' at the start", "tokenizer/decode/text: drops ' ' at the start"),
    ("decode", "tokenizer.json: skips the normalizer", "tokenizer/tokenizer.json/skips the normalizer"),
    ("encode", "tokenizer.json: skips the normalizer", "tokenizer/tokenizer.json/skips the normalizer"),
])
def test_a_file_reading_names_the_file_in_place_of_the_property(prop, kind, signature):
    from textbound.naming.divergence import kind_of, signature_of
    assert signature_of("tokenizer", prop, kind) == signature and kind_of(signature) == kind


@pytest.mark.parametrize(("state", "verdict"), [
    ({"completed": True, "new": [], "errors": []}, "passed"),
    ({"completed": True, "new": ["tokenizer/encode/x"], "errors": []}, "failed: new divergences"),
    ({"completed": True, "new": [], "errors": ["tokenizer on gpt2: harness error KeyError"]}, "failed: harness errors"),
    ({"completed": False, "interrupted": "SIGTERM", "new": [], "errors": []}, "interrupted (SIGTERM): incomplete"),
    ({"completed": False, "interrupted": "OSError: disk full", "new": [], "errors": []},
     "failed: the run stopped on OSError: disk full"),
])
def test_summary_md_says_passed_only_for_a_completed_run_without_new_divergences(state, verdict):
    assert ci_verdict(state) == verdict
