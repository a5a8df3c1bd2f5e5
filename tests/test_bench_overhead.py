"""bench --overhead: one ``overhead COMPONENT RATIO`` line per measured component (CI scripts read
it); the ratios are measured, never asserted against a time."""
from __future__ import annotations

import re

from textbound.bench.overhead import DIRECT_CALLS, run_overhead_bench
from textbound.families import resolve
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation

LINE = re.compile(r"^overhead (\S+) (\S+)  \((\S+) cases/s through the harness")


def test_each_measured_component_prints_a_positive_ratio_and_cases_per_second(capsys):
    family = resolve(["gpt2"], [], [])[0]
    rows = run_overhead_bench(Implementation("textbound.impl"), family, ["tokenizer", "detokenizer", "stops"],
                              BUDGETS["quick"], cases_per_component=30)
    lines = capsys.readouterr().out.splitlines()
    measured = [LINE.match(line) for line in lines if line.startswith("overhead ") and " not measured " not in line]
    assert all(measured), lines
    assert [m.group(1) for m in measured] == ["tokenizer", "detokenizer", "stops"] == [r["component"] for r in rows]
    for match in measured:
        assert float(match.group(2)) > 0 and float(match.group(3).replace(",", "")) > 0
    assert not any(" not measured " in line for line in lines)
    assert [r["calls"] for r in rows] == ["calls alone", "calls alone", "calls timed inside the checks"]


def test_the_interleaving_components_time_impl_and_the_oracle_where_their_checks_call_them(capsys):
    family = resolve(["gpt2"], [], [])[0]
    rows = run_overhead_bench(Implementation("textbound.impl"), family, ["chat", "tools", "structured"], BUDGETS["quick"],
                              cases_per_component=3)
    assert [r["component"] for r in rows] == ["chat", "tools", "structured"]
    assert all(r["direct_seconds"] > 0 and r["ratio"] > 0 for r in rows), rows
    assert all(line.startswith("overhead ") for line in capsys.readouterr().out.splitlines() if "cases/s" in line)


def test_every_tokenizer_and_detokenizer_property_has_its_direct_calls():
    from textbound.checks import CHECK_SOURCES
    from textbound.plan.implementation import LIBRARY
    # A server's own properties run over its wire, which bench never measures.
    library = {key for key, sources in CHECK_SOURCES.items() if LIBRARY in sources}
    assert {key for key in library if key[0] in ("tokenizer", "detokenizer")} == set(DIRECT_CALLS)
