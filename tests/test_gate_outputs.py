"""What a CI gate reads: JUnit XML (one test case per family × component × property), a Markdown
step summary, and a log of a few lines (one per family × component and a heartbeat), not one per chunk."""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

from textbound.cli import EXIT_DIVERGED, main
from textbound.run import progress

SIGNATURE = "tokenizer/encode/ids: drops tokens at the end"


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    """A gate run of the broken implementation, with --junit and --markdown (appended to)."""
    root = tmp_path_factory.mktemp("gate")
    markdown = root / "step_summary.md"
    markdown.write_text("earlier step\n")
    code = main(["check", "--impl", "tests.broken_impl", "--family", "gpt2", "--component", "tokenizer,stops",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(root / "report"),
                 "--junit", str(root / "out" / "junit.xml"), "--markdown", str(markdown)])
    return code, root


def test_junit_has_a_test_case_per_family_component_and_property(gate):
    code, root = gate
    assert code == EXIT_DIVERGED
    summary = json.loads((root / "report" / "summary.json").read_text())
    suites = ET.parse(root / "out" / "junit.xml").getroot()
    assert (root / "out" / "junit.xml").read_bytes() == (root / "report" / "junit.xml").read_bytes()
    cases = {(c.get("classname"), c.get("name")): c for c in suites.iter("testcase")}
    properties = {(f"textbound.{p['family']}.{p['component']}", p["property"]) for p in summary["properties"]}
    assert properties <= cases.keys() and {"encode", "decode", "vocab"} <= {name for _, name in properties}
    encode = cases[("textbound.gpt2.tokenizer", "encode")]
    assert SIGNATURE in encode.find("failure").get("message")
    assert cases[("textbound.gpt2.tokenizer", "decode")].find("failure") is None
    skipped = cases[("textbound.gpt2.stops", "(not checked)")].find("skipped")
    assert "not provided by tests.broken_impl" in skipped.get("message")
    assert suites.get("tests") == str(len(cases)) and suites.get("failures") == "1" and suites.get("skipped") == "1"


def test_markdown_summary_is_appended_for_the_step_summary(gate):
    _, root = gate
    text = (root / "step_summary.md").read_text()
    assert text.startswith("earlier step\n### textbound check failed: new divergences")
    assert f"| `{SIGNATURE}` |" in text
    assert text.endswith((root / "report" / "summary.md").read_text())


def simulated_log(monkeypatch, seconds: int) -> list[str]:
    """The CI log of a run of one family × component, one chunk checked every second."""
    now = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    monkeypatch.setenv("CI", "1")
    out = io.StringIO()
    log = progress.Progress(out)
    for _ in range(seconds):
        now[0] += 1
        log.checked("gpt2", "tokenizer", 1500, 0)
    log.finished("gpt2", "tokenizer", 1500 * seconds, 0)
    return out.getvalue().splitlines()


def test_ci_logs_a_line_per_family_and_component_and_a_heartbeat_at_most_every_30_s(monkeypatch):
    lines = simulated_log(monkeypatch, 600)
    assert lines[-1].endswith("gpt2 tokenizer: 900,000 cases, 0 divergences")
    assert "... 45,000 cases checked, 0 divergences; checking gpt2 tokenizer" in lines[0]
    times = [float(line[1:line.index(" s]")]) for line in lines]
    assert times[0] == 30 and min(b - a for a, b in zip(times, times[1:-1])) >= 30
    assert len(lines) <= 600 // 30 + 1


def test_a_long_run_logs_fewer_heartbeats(monkeypatch):
    assert len(simulated_log(monkeypatch, 10 * 3600)) < 70
