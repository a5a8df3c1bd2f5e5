"""The run survives the implementation under test: hangs, crashes, runaway memory and interruptions
are recorded, and the rest of the run goes on (tests/hanging_impl.py, crashing_impl.py, hungry_impl.py
each misbehave on any text with a digit)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from textbound.checks import MINIMIZED_FIELD
from textbound.checks.tokenizer import FamilyReadings
from textbound.families import Family, build_family
from textbound.naming.baseline import BaselineEntry
from textbound.naming.divergence import Case, Divergence
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import FamilyUnloadable, Implementation
from textbound.records.report import Recorder, RunInfo, Tally
from textbound.run.pool import Limits, retry_limits
from textbound.run.runner import Plan, run

ROOT = Path(__file__).parent.parent
TEXTS = ["plain words", "abc 12 def", "more words", "x9 y"]  # the second and the last misbehave
FAST = Limits(case_timeout=1.0)


def source(family, component, budget, seed):
    return iter([Case("tokenizer", "encode", family.name, {"text": t, "add_special_tokens": False}) for t in TEXTS])


def run_impl(report_dir: Path, impl_name: str, limits: Limits, jobs: int = 1) -> tuple[dict, list[dict]]:
    family = Family("gpt2", build_family("gpt2"), "embedded")
    impl = Implementation(impl_name)
    recorder = Recorder(report_dir, RunInfo(impl_name, impl.version, {}, 0, "quick", {"gpt2": str(family.path)}))
    run(Plan(impl, [family], ["tokenizer"], BUDGETS["quick"]), recorder, jobs=jobs, limits=limits, case_source=source)
    records = [json.loads(line) for line in (report_dir / "divergences.jsonl").read_text().splitlines()]
    return json.loads((report_dir / "summary.json").read_text()), records


def assert_recorded_and_went_on(summary: dict, records: list[dict], kind: str) -> None:
    assert summary["completed"] is True and summary["interrupted"] is None
    # Every case was checked, each once: the ones after the bad one ran in a fresh worker.
    every_case = Tally()
    for case in source(Family("gpt2", Path(), "embedded"), "tokenizer", BUDGETS["quick"], 0):
        every_case.add(case)
    assert summary["counts"] == [{"family": "gpt2", "component": "tokenizer", **every_case.summary(),
                                  "divergences": 2, "new": 2}]
    assert sorted(r["input"]["text"] for r in records) == ["abc 12 def", "x9 y"]
    assert {r["signature"] for r in records} == {f"tokenizer/encode/{kind}"}
    assert summary["new"] == [f"tokenizer/encode/{kind}"]
    # The first one of its signature is checked again alone and minimized (to the digit, unless the
    # time for minimizing runs out first on a loaded machine).
    first = next(r for r in records if r["input"]["text"] == "abc 12 def")
    smallest = first["minimized_input"]["text"]
    assert len(smallest) < len("abc 12 def") and any(c.isdigit() for c in smallest), first
    assert first["reproduce"].startswith("textbound replay --impl tests.")


def test_a_hanging_case_times_out_is_minimized_and_the_run_goes_on(tmp_path):
    started = time.monotonic()
    summary, records = run_impl(tmp_path, "tests.hanging_impl", FAST, jobs=2)
    assert_recorded_and_went_on(summary, records, "timed out")
    assert records[0]["actual"] == "no answer after 1 s"
    assert time.monotonic() - started < 60  # minimization of a hang is bounded (10 case timeouts)


def test_a_family_fact_a_check_computes_is_the_setups_time_not_the_cases(tmp_path, monkeypatch):
    # Naming a tokenizer divergence loads a copy of tokenizer.json per reading (FamilyReadings.of):
    # minutes for a large vocabulary, which a case's clock must not count (mistral.rs's qwen3 and
    # llama3_1 were abandoned after five such time-outs). Workers fork, so they inherit the slow one.
    readings = FamilyReadings.of.__func__

    def slow(cls, folder):
        time.sleep(1.5)  # past FAST's case timeout
        return readings(cls, folder)

    monkeypatch.setattr(FamilyReadings, "of", classmethod(slow))
    summary, records = run_impl(tmp_path, "tests.broken_impl", FAST)
    assert sorted(r["input"]["text"] for r in records) == ["abc 12 def", "x9 y"]
    assert not any("timed out" in r["signature"] for r in records), [r["signature"] for r in records]


def test_a_silent_worker_starved_once_does_not_make_impls_hang_the_oracles(monkeypatch):
    """The oracle hangs on a case every time; a worker on a loaded machine misses its limit seldom
    twice: impl's hang stays impl's unless the silent implementation times out in each fresh worker."""
    from textbound.run import pool as pool_module

    family = Family("gpt2", build_family("gpt2"), "embedded")
    case = Case("tokenizer", "encode", "gpt2", {"text": "x9 y", "add_special_tokens": False})
    stuck = Divergence(case, "an answer", "no answer after 1 s", "timed out")
    answers = iter([stuck.signature, None])  # starved once, then the case answers at once
    monkeypatch.setattr(pool_module.Pool, "probe", lambda self, family, case, fresh=False: next(answers))
    silent = pool_module.Pool("textbound.impl", 1, FAST)
    try:
        assert pool_module.hangs_without_impl(silent, family, stuck) is False
    finally:
        silent.close()


def test_a_case_that_hangs_only_after_others_gets_a_signature_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HANGS_ONLY_AFTER_ANOTHER_TEXT", "1")
    summary, records = run_impl(tmp_path, "tests.hanging_impl", FAST)
    assert {r["signature"] for r in records} == {"tokenizer/encode/timed out, not when checked alone"}
    assert all(r["first_difference"]["checked alone"] == "agrees with the oracle" for r in records)
    assert all(r["minimized_input"] == r["input"] for r in records)  # nothing to shrink: alone it passes


def test_a_crashing_case_is_recorded_with_its_signal_and_the_run_goes_on(tmp_path):
    summary, records = run_impl(tmp_path, "tests.crashing_impl", FAST, jobs=1)
    assert_recorded_and_went_on(summary, records, "crashed (SIGSEGV)")


def test_an_impl_raising_a_panic_or_sys_exit_is_its_divergence_not_a_harness_error(tmp_path):
    summary, records = run_impl(tmp_path, "tests.exiting_impl", FAST)
    assert summary["harness_errors"] == [] and summary["completed"] is True
    assert {r["input"]["text"]: r["signature"] for r in records} == {
        "abc 12 def": "tokenizer/encode/raised SystemExit", "x9 y": "tokenizer/encode/raised PanicException"}


def test_a_family_impl_cannot_load_stops_the_run_before_any_case(tmp_path):
    """Not a divergence in every case: the run is not set up (tests/test_contract.py: one line, exit 2)."""
    family = Family("gpt2", build_family("gpt2"), "embedded")
    impl = Implementation("tests.contract_engines.unloadable")
    recorder = Recorder(tmp_path, RunInfo(impl.name, impl.version, {}, 0, "quick", {"gpt2": str(family.path)}))
    with pytest.raises(FamilyUnloadable, match="cannot load family gpt2 .*: Tokenizer.from_dir raised RuntimeError"):
        run(Plan(impl, [family], ["tokenizer"], BUDGETS["quick"]), recorder, limits=FAST, case_source=source)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["completed"] is False and summary["interrupted"].startswith("FamilyUnloadable: ")
    assert summary["counts"] == [] and summary["signatures"] == {}


def test_a_runaway_allocation_under_max_memory_is_recorded(tmp_path):
    summary, records = run_impl(tmp_path, "tests.hungry_impl", Limits(case_timeout=10.0, max_memory_mb=4096))
    assert_recorded_and_went_on(summary, records, "out of memory")


def test_a_worker_that_cannot_receive_ends_and_the_run_with_it(tmp_path, monkeypatch):
    """A MemoryError in a worker's receiving thread (a tight --max-memory) ends the worker, so its
    cases are recorded as crashed and the run ends, rather than the parent waiting on an idle worker."""
    from multiprocessing.connection import Connection

    parent, receive = os.getpid(), Connection.recv

    def fails_in_workers(connection):
        if os.getpid() != parent:
            raise MemoryError
        return receive(connection)

    def waited_too_long(signum, frame):
        raise TimeoutError("the run waited on a worker that can no longer receive a job")

    monkeypatch.setattr(Connection, "recv", fails_in_workers)
    previous = signal.signal(signal.SIGALRM, waited_too_long)
    signal.alarm(120)
    try:
        summary, records = run_impl(tmp_path, "textbound.impl", FAST)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # the crash does not need impl (the same worker runs the oracle alone): the oracle's failure, never impl's
    assert {r["signature"] for r in records} == {"tokenizer/encode/oracle failure: crashed (exit 1)"}
    assert summary["completed"] is True and summary["counts"][0]["cases"] == len(TEXTS)


def test_a_max_memory_no_worker_can_start_under_is_one_line_before_any_report(tmp_path):
    report = tmp_path / "report"
    finished = subprocess.run([sys.executable, "-m", "textbound.cli", "check", "--family", "gpt2", "--component",
                               "tokenizer", "--budget", "quick", "--max-memory", "1", "--report-dir", str(report)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 2, finished.stderr
    assert finished.stderr.startswith("textbound: --max-memory 1: a worker starts at the ") and \
        finished.stderr.count("\n") == 1, finished.stderr
    assert not report.exists()


def test_after_too_many_stuck_cases_a_family_and_component_is_abandoned(tmp_path, monkeypatch):
    monkeypatch.setattr("textbound.run.pool.MAX_STUCK_PER_GROUP", 1)
    summary, records = run_impl(tmp_path, "tests.crashing_impl", FAST)
    assert [r["input"]["text"] for r in records] == ["abc 12 def"]
    assert summary["counts"][0]["cases"] == 2  # up to the crash; the rest was not checked
    assert any("abandoned after 1 timed-out or crashed cases" in note for note in summary["notes"])


def interrupted_summary(command: list[str], report: Path, signum: int, env: dict[str, str]) -> dict:
    """The summary.json of a check of tests.hanging_impl (``command``, writing to ``report``) sent
    ``signum`` once checking has begun: the process exits 128 + the signal after writing it."""
    # As a terminal's foreground job gets Ctrl-C: a shell starts a background job (pytest run with `&`)
    # with SIGINT ignored, and the child would inherit that.
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "CI": "1", **env},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not (report / "divergences.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # checking has begun, and hangs on the first text with a digit
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, out + err
    summary = json.loads((report / "summary.json").read_text())
    assert summary["completed"] is False and summary["interrupted"] == signal.Signals(signum).name
    return summary


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_writes_its_report_and_says_so(tmp_path, signum):
    report = tmp_path / "report"
    command = [sys.executable, "-m", "textbound.cli", "check", "--impl", "tests.hanging_impl", "--family", "gpt2",
               "--component", "tokenizer", "--budget", "quick", "--jobs", "1", "--case-timeout", "600",
               "--report-dir", str(report)]
    interrupted_summary(command, report, signum, {})
    assert f"INTERRUPTED ({signal.Signals(signum).name})" in (report / "report.md").read_text()
    assert (report / "summary.md").read_text().startswith(
        f"### textbound check interrupted ({signal.Signals(signum).name}): incomplete")
    assert 'data-completed="false"' in (report / "report.html").read_text()


def test_a_hanging_case_without_the_minimized_field_is_recorded_whole(tmp_path, monkeypatch):
    # The check of tokenizer/encode shrinks "absent" here, a field these cases are built without
    # (as optional fields of some builders are): the hang is recorded as it is, not a KeyError.
    monkeypatch.setitem(MINIMIZED_FIELD, ("tokenizer", "encode"), "absent")
    summary, records = run_impl(tmp_path, "tests.hanging_impl", FAST)
    assert summary["completed"] is True and summary["errors"] == []
    assert {r["signature"] for r in records} == {"tokenizer/encode/timed out"}
    assert all(r["minimized_input"] == r["input"] for r in records)


def test_a_run_interrupted_before_its_cases_come_back_says_so_and_lists_nothing_as_checked(tmp_path, monkeypatch):
    """Ctrl-C while the first chunk is still out: summary.md says interrupted, not passed; nothing is
    listed as checked (no row has its cases), and no baseline entry is called fixed."""
    monkeypatch.setattr("textbound.run.runner.CHUNK", 1)

    def interrupted_source(family, component, budget, seed):
        yield Case("tokenizer", "encode", family.name, {"text": "plain words", "add_special_tokens": False})
        raise KeyboardInterrupt

    family = Family("gpt2", build_family("gpt2"), "embedded")
    recorder = Recorder(tmp_path, RunInfo("impl", "0", {}, 0, "quick", {"gpt2": str(family.path)}))
    entry = BaselineEntry("tokenizer/encode/x", "gpt2", "known")
    with pytest.raises(KeyboardInterrupt):
        run(Plan(Implementation("textbound.impl"), [family], ["tokenizer"], BUDGETS["quick"], baseline=[entry]), recorder,
            limits=FAST, case_source=interrupted_source)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["completed"] is False and summary["interrupted"] == "SIGINT"
    assert summary["checked"] == [[c["family"], c["component"]] for c in summary["counts"]]
    assert summary["fixed"] == []
    assert (tmp_path / "summary.md").read_text().startswith("### textbound check interrupted (SIGINT): incomplete")


def run_on_a_looping_template(tmp_path, contents: tuple[str, ...]):
    """The verdict and summary of impl's chat render cases, one user message of each of
    ``contents``, on a family whose template loops for hours in the oracle (transformers' Jinja)."""
    folder = tmp_path / "family"
    shutil.copytree(build_family("gpt2"), folder)
    (folder / "chat_template.jinja").write_text(
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}{{ messages[0].content }}")

    def looping_source(family, component, budget, seed):
        return iter([Case("chat", "render", family.name, {"template": "family", "messages": [
            {"role": "user", "content": content}]}) for content in contents])

    family = Family("looping", folder, "folder")
    recorder = Recorder(tmp_path / "report", RunInfo("impl", "0", {}, 0, "quick", {family.name: str(folder)}))
    verdict = run(Plan(Implementation("textbound.impl"), [family], ["chat"], BUDGETS["quick"]), recorder, limits=FAST,
                  case_source=looping_source)
    return verdict, json.loads((tmp_path / "report" / "summary.json").read_text())


def test_an_oracle_that_hangs_is_an_oracle_failure_apart_never_impls_divergence(tmp_path):
    """The case times out with any implementation, so it is recorded as the oracle's failure, not
    counted against impl."""
    verdict, summary = run_on_a_looping_template(tmp_path, ("hi",))
    assert verdict.new == [] and summary["new"] == [] and summary["counts"][0]["divergences"] == 0
    assert not verdict.failed and not summary["harness_errors"]
    assert summary["oracle_disagreement_signatures"] == {"chat/render/oracle failure: timed out": 1}
    record = json.loads((tmp_path / "report" / "divergences.jsonl").read_text())
    assert record["first_difference"]["without impl"] == "timed out as well, with textbound.run.silent_impl"
    assert "## Oracle disagreements and failures" in (tmp_path / "report" / "report.md").read_text()


def test_a_hang_is_rechecked_and_minimized_under_a_limit_from_the_slowest_answered_case(tmp_path):
    """The run's cases answer in milliseconds: each recheck and minimizing try of a hang may take 1 s
    (ten times the slowest, at least 1 s), not the case timeout, and all tries 30 of those; the
    record says so (a quick run against an engine that hangs ends in minutes, not a quarter hour)."""
    summary, records = run_impl(tmp_path, "tests.hanging_impl", Limits(case_timeout=3.0), jobs=2)
    first = next(r for r in records if r["input"]["text"] == "abc 12 def")
    assert first["first_difference"]["rechecked under"] == "1 s"
    assert first["first_difference"]["minimized under"] == "1 s a try, 30 s in all"
    assert first["actual"] == "no answer after 3 s"  # the run's own limit found it
    assert summary["slowest_case"]["seconds"] < 0.1 and summary["limits"]["case_timeout"] == 3.0


def test_retry_limits_are_ten_times_the_slowest_answered_case_within_the_case_timeout():
    assert retry_limits(Limits(case_timeout=30.0), 0.01).case_timeout == 1.0
    assert retry_limits(Limits(case_timeout=30.0), 0.5).case_timeout == 5.0
    assert retry_limits(Limits(case_timeout=30.0), 7.0).case_timeout == 30.0
    assert retry_limits(Limits(case_timeout=30.0), 0.5).load_timeout == 300.0  # loading keeps the run's limit


def test_a_component_abandoned_because_the_oracle_hangs_fails_the_run(tmp_path, monkeypatch):
    """The oracle hanging on case after case is never impl's divergence, but the cases after the
    abandonment were not checked: a gate that checked nothing of chat must not pass."""
    monkeypatch.setattr("textbound.run.pool.MAX_STUCK_PER_GROUP", 1)
    verdict, summary = run_on_a_looping_template(tmp_path, ("hi", "ho"))
    assert verdict.new == [] and verdict.failed
    assert [e["message"] for e in summary["harness_errors"]] == [
        "abandoned after 1 timed-out or crashed cases; the rest was not checked"]
