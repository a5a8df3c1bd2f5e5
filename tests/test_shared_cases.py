"""A run checks an input of a family-independent property (checks.FAMILY_INDEPENDENT) once, on the
first family that has it, and says so; a divergence on it is still found, and a property that reads
the family is checked on every family."""
from __future__ import annotations

import json
from pathlib import Path

from textbound.checks import FAMILY_INDEPENDENT, case_source
from textbound.families import resolve
from textbound.naming.divergence import Case
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation
from textbound.records.report import Recorder, RunInfo
from textbound.run.runner import Plan, SharedCases, run

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def source(family, component, budget, seed):
    given = {"format": "hermes", "text": CALL, "splits": []}
    return iter([Case("tools", "whole", family.name, given), Case("tools", "tokens", family.name, given),
                 Case("tools", "whole", family.name, {**given, "text": f"{family.name} says {CALL}"})])


def run_two_families(report_dir: Path, impl_name: str) -> tuple[dict, list[dict]]:
    families = resolve(["bert", "gpt2"], [], [])
    impl = Implementation(impl_name)
    recorder = Recorder(report_dir, RunInfo(impl_name, impl.version, {}, 0, "quick",
                                            {f.name: str(f.path) for f in families}))
    run(Plan(impl, families, ["tools"], BUDGETS["quick"]), recorder, case_source=source)
    records = [json.loads(line) for line in (report_dir / "divergences.jsonl").read_text().splitlines()]
    return json.loads((report_dir / "summary.json").read_text()), records


def test_a_shared_input_is_checked_once_and_the_report_says_so(tmp_path):
    summary, records = run_two_families(tmp_path, "textbound.impl")
    cases = {(p["family"], p["property"]): p["cases"] for p in summary["properties"]}
    # gpt2's copy of bert's whole-parse case is not checked again; its own text and the tokens are.
    assert cases == {("bert", "whole"): 2, ("bert", "tokens"): 1, ("gpt2", "whole"): 1, ("gpt2", "tokens"): 1}
    assert records == []
    shared = [note for note in summary["notes"] if note.startswith("inputs an earlier family of the run had too")]
    assert len(shared) == 1 and shared[0].endswith(": tools/whole 1 case on 1 family"), summary["notes"]


def test_a_divergence_on_a_shared_input_is_found_on_the_family_that_checks_it(tmp_path):
    summary, records = run_two_families(tmp_path, "tests.broken_tools_impl.empty_content")
    whole = [r for r in records if r["property"] == "whole"]
    assert [(r["family"], r["input"]["text"]) for r in whole] == [("bert", CALL)]
    assert "tools/whole/content is \"\" beside tool calls, not null" in summary["new"]


def test_shared_cases_pass_other_properties_through_and_keep_key_order():
    shared = SharedCases()
    first = Case("structured", "sound", "bert", {"schema": {"properties": {"a": {}, "b": {}}}})
    reordered = Case("structured", "sound", "gpt2", {"schema": {"properties": {"b": {}, "a": {}}}})
    again = Case("structured", "sound", "gpt2", first.input)
    masked = Case("structured", "mask", "gpt2", first.input)
    assert list(shared.first_seen([first, reordered, again, masked])) == [first, reordered, masked]
    assert shared.repeats == {("structured", "sound"): 1}


def test_every_family_builds_the_same_cases_for_the_corpus_schemas_and_its_own_for_the_rest():
    assert {("structured", p) for p in ("sound", "complete", "differential", "errors")} <= FAMILY_INDEPENDENT
    assert ("structured", "mask") not in FAMILY_INDEPENDENT and ("tools", "tokens") not in FAMILY_INDEPENDENT
    bert, gpt2 = ([c for c in case_source(f, "structured", BUDGETS["default"], 0) if c.property == "sound"]
                  for f in resolve(["bert", "gpt2"], [], []))
    corpus = [{json.dumps(c.input) for c in cases if not c.input["source"].startswith("generated-")}
              for cases in (bert, gpt2)]
    generated = [{json.dumps(c.input) for c in cases if c.input["source"].startswith("generated-")}
                 for cases in (bert, gpt2)]
    assert corpus[0] == corpus[1] and len(corpus[0]) == 60
    assert generated[0] and not generated[0] & generated[1]
