"""An installed wheel checks what the checkout checks. ``python -m build`` makes an sdist and, from
it, a wheel that holds the ``textbound`` package alone; installed apart (``pip install --no-deps
--target .../site-packages``, so that Hypothesis sees installed code, as in any environment) and run
from outside the checkout, it checks the same cases as this checkout at the quick budget, per
family × component: the same count and the same summary.json ``cases_digest``. An engine whose
scripts the wheel does not hold (engines/) is refused in one line at setup.

One small embedded family on which every component has cases keeps this to about half a minute.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from textbound.cli import EXIT_SETUP, main
from textbound.naming.divergence import COMPONENTS

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "wordlevel"
RUN = ["check", "--family", FAMILY, "--budget", "quick", "--jobs", "1"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    assert len(list(out.glob("*.tar.gz"))) == 1  # the wheel was built from it
    return wheel


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("installed") / "site-packages"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                                str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return site


def installed_run(site: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m textbound.cli ARGS`` importing textbound from ``site`` alone, in ``cwd``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environment.update(PYTHONPATH=str(site), **env)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True)


def cases_checked(report_dir: Path) -> dict[tuple[str, str], tuple[int, str]]:
    summary = json.loads((report_dir / "summary.json").read_text(encoding="utf-8"))
    return {(c["family"], c["component"]): (c["cases"], c["cases_digest"]) for c in summary["counts"]}


def test_the_wheel_holds_textbound_alone(wheel):
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    (metadata,) = {top for top in tops if top.endswith(".dist-info")}
    assert tops == {"textbound", metadata} and metadata.startswith("textbound-")


def test_the_installed_wheel_checks_the_cases_the_checkout_checks(site, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = installed_run(site, elsewhere, "-c", "import textbound, textbound.impl, textbound.properties.strategies as s; "
                                                 "print(textbound.__file__, textbound.impl.__file__, s.__file__)")
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert all(Path(f).is_relative_to(site) for f in probe.stdout.split()), probe.stdout

    from_wheel = installed_run(site, elsewhere, "-m", "textbound.cli", *RUN, "--report-dir", str(tmp_path / "wheel"))
    assert "Traceback" not in from_wheel.stderr, from_wheel.stderr[-3000:]
    from_checkout = main([*RUN, "--report-dir", str(tmp_path / "checkout")])
    assert from_wheel.returncode == from_checkout, from_wheel.stderr[-3000:]

    checked = cases_checked(tmp_path / "checkout")
    assert {component for _, component in checked} == set(COMPONENTS)
    assert all(cases > 0 for cases, _ in checked.values()), checked
    assert cases_checked(tmp_path / "wheel") == checked


def test_an_engine_the_wheel_does_not_hold_is_refused_in_one_line(site, tmp_path):
    refused = installed_run(site, tmp_path, "-m", "textbound.cli", "check", "--impl", "textbound.adapters.sglang",
                            "--family", FAMILY, "--component", "tools", "--report-dir", str(tmp_path / "report"),
                            TEXTBOUND_SGLANG_PYTHON=sys.executable, TEXTBOUND_ENGINES="")
    assert refused.returncode == EXIT_SETUP, refused.stderr[-2000:]
    assert "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert f"{site / 'engines' / 'sglang' / 'engine.py'}: no such file" in line and "$TEXTBOUND_ENGINES" in line
