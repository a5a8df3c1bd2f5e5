"""``textbound triage DIR --reproducers OUT``: a standalone script per tokenizer signature, with a
minimized tokenizer.json inline, that fails on the broken implementation without textbound."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import impl
from textbound.cli import main

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "tests.one_bug.decode_drops_leading_space"


def engine_site(tmp_path: Path) -> Path:
    """A folder holding only what the engine imports: impl and the engine's own module (and a
    textbound that cannot be imported)."""
    site = tmp_path / "site"
    shutil.copytree(Path(impl.__file__).parent, site / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "tests" / "one_bug").mkdir(parents=True)
    (site / "tests" / "__init__.py").write_text("")
    (site / "tests" / "one_bug" / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "one_bug" / "decode_drops_leading_space.py", site / "tests" / "one_bug")
    # The venv has textbound installed: shadowed here, so a script needing it fails.
    (site / "textbound").mkdir()
    (site / "textbound" / "__init__.py").write_text("raise ImportError('a reproducer must not need textbound')\n")
    return site


def test_reproducers_run_without_textbound_and_fail_on_the_broken_impl(tmp_path, capsys):
    run, out = tmp_path / "run", tmp_path / "reproducers"
    main(["check", "--impl", ENGINE, "--family", "gpt2", "--component", "tokenizer", "--budget", "quick",
          "--jobs", "1", "--report-dir", str(run)])
    capsys.readouterr()
    assert main(["triage", str(run), "--no-explain", "--reproducers", str(out)]) == 0
    assert "reproducers:\n  tokenizer/decode/text: drops ' ' at the start: " in capsys.readouterr().out
    scripts = sorted(out.glob("*.py"))
    assert [s.name for s in scripts] == ["01-tokenizer-decode-text-drops-at-the-start.py"]
    text = scripts[0].read_text()
    assert not re.search(r"^(import|from) textbound", text, re.M)
    spec = json.loads(re.search(r"^TOKENIZER_JSON = (.*)$", text, re.M).group(1)[1:-1])
    assert len(spec["model"]["vocab"]) <= 3 and spec["model"]["merges"] == []  # from gpt2's 2000 and 1700

    clean = tmp_path / "clean"
    clean.mkdir()
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(engine_site(tmp_path))}
    result = subprocess.run([sys.executable, str(scripts[0])], cwd=clean, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr
    expected, actual = result.stdout.splitlines()
    assert expected.startswith("expected: ' ") and actual.startswith("actual:   '")
    assert list(clean.iterdir()) == []


def test_a_run_without_tokenizer_divergences_writes_no_script(tmp_path, capsys):
    main(["check", "--family", "gpt2", "--component", "stops", "--budget", "quick", "--jobs", "1",
          "--report-dir", str(tmp_path / "run")])
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "out")]) == 0
    assert list((tmp_path / "out").iterdir()) == []
    (tmp_path / "file").write_text("")
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "file")]) == 2
    assert "--reproducers: " in capsys.readouterr().err
