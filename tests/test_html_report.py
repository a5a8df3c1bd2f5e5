"""report.html renders in a real headless browser (Debian's chromium), and what it shows equals
summary.json: the counts per family × component, the totals its script computes, every root cause
and signature."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from textbound.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs a headless browser: Debian's chromium package "
                                                         "(apt-get install chromium)")
# Flags for a closed network and a throwaway profile (no sandbox: CI runs as root).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Page(HTMLParser):
    """What a test reads off the rendered DOM: elements with ids or data attributes, and their text."""

    def __init__(self):
        super().__init__()
        self.rows: list[dict] = []  # data attributes of each counts row and its cells
        self.sections: list[dict] = []  # each root cause's
        self.signatures: list[dict] = []
        self.by_id: dict[str, str] = {}
        self.attributes_by_id: dict[str, dict] = {}
        self._open_id: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-family" in attrs:
            self.rows.append(dict(attrs))
        elif tag == "td" and self.rows and any(k.startswith("data-") for k in attrs):
            self.rows[-1].update(attrs)
        elif tag == "section":
            self.sections.append(attrs)
        if "data-signature" in attrs:
            self.signatures.append(attrs)
        if "id" in attrs:
            self._open_id = attrs["id"]
            self.by_id[attrs["id"]] = ""
            self.attributes_by_id[attrs["id"]] = attrs

    def handle_data(self, data):
        if self._open_id:
            self.by_id[self._open_id] += data

    def handle_endtag(self, tag):
        self._open_id = None


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    report_dir = tmp_path_factory.mktemp("report")
    main(["check", "--impl", "tests.broken_impl", "--family", "gpt2", "--component", "tokenizer,stops",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(report_dir)])
    return report_dir


def browse(report: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *flags,
                           (report / "report.html").as_uri()], capture_output=True, text=True, timeout=120)


def test_the_page_rendered_by_chromium_shows_the_numbers_of_summary_json(report, tmp_path):
    summary = json.loads((report / "summary.json").read_text())
    rendered = browse(report, tmp_path, "--dump-dom")
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    page = Page()
    page.feed(rendered.stdout)
    shown = [{"family": r["data-family"], "component": r["data-component"], "cases": int(r["data-cases"]),
              "divergences": int(r["data-divergences"]), "new": int(r["data-new"])} for r in page.rows]
    assert shown == [{k: v for k, v in count.items() if k != "cases_digest"} for count in summary["counts"]]
    # the totals are computed by the page's script: the browser ran it
    for name in ("cases", "divergences", "new"):
        assert int(page.by_id[f"total-{name}"].replace(",", "")) == sum(c[name] for c in summary["counts"]), name
    assert {s["data-root-cause"]: int(s["data-count"]) for s in page.sections} == {
        c["name"]: c["cases"] for c in summary["root_causes"]}
    assert {s["data-signature"]: int(s["data-count"]) for s in page.signatures} == summary["signatures"]
    assert int(page.by_id["new-signatures"]) == len(summary["new"])
    assert page.attributes_by_id["run-state"]["data-completed"] == "true"
    assert "stops on gpt2: not provided by tests.broken_impl" in rendered.stdout


def test_the_page_needs_no_network_and_draws_something(report, tmp_path):
    text = (report / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    screenshot = tmp_path / "page.png"
    shot = browse(report, tmp_path, f"--screenshot={screenshot}", "--window-size=1200,1600")
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000
