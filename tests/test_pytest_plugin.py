"""The pytest plugin (textbound/pytest_plugin.py) as an engine's suite uses it, in pytester's folders:
one item per family × component × property, failing with the root cause of a planted bug, xfailing
on the baseline (and failing once an entry matches nothing), skipping what the implementation lacks,
the same under xdist as in one process. One embedded family, the quick budget, fast components."""
from __future__ import annotations

import json
import re

import pytest

from textbound.checks import case_source, properties
from textbound.families import resolve
from textbound.families.cache import CACHE_ENV, default_cache_dir
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import LIBRARY, SERVER

pytest_plugins = ["pytester"]

FAMILY = "gpt2"
CLEAN, BUGGY = "textbound.impl", "textbound.mutants.stops_within_delta"  # one bug: stops looked for per delta
STREAM, PIPELINE = "textbound[gpt2-stops-stream]", "textbound[gpt2-stops-pipeline]"
# Several stop checkers fed interleaved each give what they give alone, whatever each gives: BUGGY passes.
INTERLEAVED = "textbound[gpt2-stops-interleaved]"
DETOKENIZER = ["textbound[gpt2-detokenizer-stream]", "textbound[gpt2-detokenizer-decode_stream]",
               "textbound[gpt2-detokenizer-interleaved]"]
WITHIN_DELTA = "releases text that may begin a stop"  # the kind of both stops signatures of BUGGY
FAMILIES_BUILT = default_cache_dir()  # pytester moves $HOME: its runs find the families built here


@pytest.fixture(autouse=True)
def built_families(monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(FAMILIES_BUILT))


def checked(pytester: pytest.Pytester, impl: str, *args: str, components: str = "stops"):
    return pytester.runpytest("--textbound-impl", impl, "--textbound-family", FAMILY, "--textbound-budget", "quick",
                              "--textbound-component", components, *args)


def outcomes(result) -> dict[str, str]:
    """Node id -> passed, failed, skipped or xfailed, as the process gathering the reports saw them."""
    found = {}
    for report in result.reprec.getreports("pytest_runtest_logreport"):
        if report.when == "call" or report.outcome != "passed":
            found[report.nodeid] = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    return found


def literal(text: str) -> str:
    """``text`` as an fnmatch pattern matching itself (item ids hold brackets, baselines "*")."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


def baseline(pytester: pytest.Pytester, *entries: tuple[str, str]) -> str:
    path = pytester.path / "baseline.json"
    path.write_text(json.dumps({"entries": [{"signature": signature, "family": family, "reason": f"issue of {signature}"}
                                            for signature, family in entries]}), encoding="utf-8")
    return str(path)


def test_without_an_implementation_named_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(test_engine="def test_engine(): pass")
    result = pytester.runpytest("--textbound-family", FAMILY)
    assert outcomes(result) == {"test_engine.py::test_engine": "passed"}


def test_a_clean_implementation_configured_in_the_ini_file_passes_one_item_per_property(pytester, monkeypatch):
    """A conftest-free ini file naming a module beside it, pytest run from a folder below."""
    pytester.makepyfile(ini_engine=f"from {CLEAN} import *  # noqa: F403")
    pytester.makeini(f"[pytest]\ntextbound_impl = ini_engine\ntextbound_family = {FAMILY}\n"
                     "textbound_component = stops\ntextbound_budget = quick\n")
    monkeypatch.chdir(pytester.mkdir("below"))
    result = pytester.runpytest("-v")
    assert outcomes(result) == {STREAM: "passed", PIPELINE: "passed", INTERLEAVED: "passed"}
    result.stdout.fnmatch_lines(["*collected 3 items", f"../{literal(STREAM)} PASSED*"])  # as pytest names it from below


def test_one_bug_fails_exactly_its_items_with_its_root_cause_smallest_example_and_replay(pytester):
    result = checked(pytester, BUGGY, components="stops,detokenizer")
    assert outcomes(result) == {STREAM: "failed", PIPELINE: "failed", INTERLEAVED: "passed",
                                **dict.fromkeys(DETOKENIZER, "passed")}
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = result.reprec.matchreport(STREAM).longreprtext
    assert re.match(r"gpt2 stops/stream: \d+ of the \d+ case\(s\) checked diverge from the oracle beyond the "
                    r"baseline, 1 root cause\(s\)\n", report)
    assert f"1. stops/stream/{WITHIN_DELTA} (" in report
    assert "explained by stops_within_delta (a stop string split across deltas missed)" in report
    assert "smallest example, minimized" in report
    assert f"replay: textbound replay --impl {BUGGY} --model-dir " in report


def test_baselined_divergences_xfail_with_the_reason_and_an_entry_that_matches_nothing_fails(pytester):
    known = baseline(pytester, (f"stops/stream/{WITHIN_DELTA}", FAMILY), (f"stops/pipeline/{WITHIN_DELTA}", FAMILY))
    result = checked(pytester, BUGGY, "--textbound-baseline", known, "-rx")
    assert outcomes(result) == {STREAM: "xfailed", PIPELINE: "xfailed", INTERLEAVED: "passed"} and result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"XFAIL {literal(STREAM)} - stops/stream/{WITHIN_DELTA}: issue of stops/stream/*"])

    fixed = checked(pytester, CLEAN, "--textbound-baseline", known)  # strict: fixed fails, as the gate's fixed count
    assert outcomes(fixed) == {STREAM: "failed", PIPELINE: "failed", INTERLEAVED: "passed"}
    assert (f"fixed: the baseline entry stops/stream/{WITHIN_DELTA} on gpt2 (issue of stops/stream/{WITHIN_DELTA}) "
            "matched none of the") in fixed.reprec.matchreport(STREAM).longreprtext


def test_an_entry_for_every_family_is_judged_at_the_end_of_the_session(pytester):
    spanning = baseline(pytester, (f"stops/stream/{WITHIN_DELTA}", "*"))
    known = checked(pytester, BUGGY, "--textbound-baseline", spanning)
    assert outcomes(known) == {STREAM: "xfailed", PIPELINE: "failed", INTERLEAVED: "passed"}
    fixed = checked(pytester, CLEAN, "--textbound-baseline", spanning)
    assert outcomes(fixed) == {STREAM: "passed", PIPELINE: "passed", INTERLEAVED: "passed"} and fixed.ret == pytest.ExitCode.TESTS_FAILED
    fixed.stdout.fnmatch_lines([literal(f"FIXED (remove from baseline) stops/stream/{WITHIN_DELTA} on *: ") + "*"])
    deselected = checked(pytester, CLEAN, "--textbound-baseline", spanning, "-k", "pipeline")  # its property not run
    assert deselected.ret == pytest.ExitCode.OK


def test_under_xdist_the_items_spread_over_workers_with_the_outcomes_of_one_process(pytester):
    entries = baseline(pytester, (f"stops/stream/{WITHIN_DELTA}", FAMILY), ("detokenizer/stream/never seen", "*"))
    args = ("--textbound-baseline", entries, "-p", "xdist")
    alone, spread = (checked(pytester, BUGGY, *args, *extra, components="stops,detokenizer") for extra in ((), ("-n", "2")))
    expected = {STREAM: "xfailed", PIPELINE: "failed", INTERLEAVED: "passed", **dict.fromkeys(DETOKENIZER, "passed")}
    assert outcomes(alone) == outcomes(spread) == expected
    workers = {report.node.gateway.id for report in spread.reprec.getreports("pytest_runtest_logreport")}
    assert workers == {"gw0", "gw1"}
    for result in (alone, spread):
        result.stdout.fnmatch_lines([literal("FIXED (remove from baseline) detokenizer/stream/never seen on *: ") + "*"])
        assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_property_the_implementation_lacks_is_skipped_saying_what_it_misses(pytester):
    pytester.makepyfile(stops_only="from textbound.impl import StopChecker  # noqa: F401")
    result = checked(pytester, "stops_only", "-rs", components="stops,detokenizer")
    assert outcomes(result) == {STREAM: "passed", PIPELINE: "skipped", INTERLEAVED: "passed",
                                **dict.fromkeys(DETOKENIZER, "skipped")}
    result.stdout.fnmatch_lines([literal("SKIPPED [4] ") + "*" + literal(": not provided by stops_only (missing Tokenizer, IncrementalDetokenizer)")])


def test_a_hanging_implementation_times_out_case_by_case_in_the_pytest_process(pytester):
    """tests/hanging_impl.py spins on every text with a digit: each such case stops at the case timeout,
    the first is checked again in a worker and minimized, and five abandon the property."""
    result = checked(pytester, "tests.hanging_impl", "--textbound-case-timeout", "0.2", "-k", "encode",
                     components="tokenizer")
    assert outcomes(result) == {"textbound[gpt2-tokenizer-encode]": "failed"}
    report = result.reprec.matchreport("textbound[gpt2-tokenizer-encode]").longreprtext
    assert "1. tokenizer/encode/timed out" in report
    assert report.endswith("harness error: abandoned after 5 timed-out cases; the rest was not checked")


@pytest.mark.parametrize(("args", "line"), [
    (("--textbound-family", "nosuch"), "ERROR: textbound: --textbound-family: unknown family nosuch*"),
    (("--textbound-budget", "fast"), "ERROR: textbound: --textbound-budget: 'fast' is not a budget *"),
    (("--textbound-case-timeout", "0"), "ERROR: textbound: --textbound-case-timeout: '0': expected a number *"),
])
def test_an_unusable_option_is_one_line_and_a_usage_error(pytester, args, line):
    result = checked(pytester, CLEAN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize("source", [LIBRARY, SERVER])
@pytest.mark.parametrize("component", ["stops", "detokenizer"])
def test_the_checks_sources_name_every_property_their_builders_make(source, component):
    """Items are collected from the checks' sources before any case is built: a builder making a case
    of another property would leave it unchecked (the plugin stops such an item with a harness error)."""
    family = resolve([FAMILY], [], [])[0]
    made = {case.property for case in case_source(family, component, BUDGETS["quick"], 0, source=source)}
    assert made == set(properties(component, source))
