"""``textbound triage DIR --reproducers OUT``: a standalone script per signature of an --impl module,
in its own API, with the data (a minimized tokenizer.json where it needs a tokenizer) and the
reference's answer inline, that fails on the broken implementation without textbound and passes
on impl."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import impl
import pytest
from textbound.cli import main

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "tests.one_bug.decode_drops_leading_space"


def engine_site(tmp_path: Path, *modules: str) -> Path:
    """A folder holding only what the engine imports: impl and the engine's own modules (files of
    this repository, with their packages' ``__init__``; and a textbound that cannot be imported)."""
    site = tmp_path / "site"
    shutil.copytree(Path(impl.__file__).parent, site / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    for module in modules:
        *packages, name = module.split(".")
        folder = site.joinpath(*packages)
        folder.mkdir(parents=True, exist_ok=True)
        for depth in range(1, len(packages) + 1):
            site.joinpath(*packages[:depth], "__init__.py").touch()
        shutil.copy(ROOT.joinpath(*packages, f"{name}.py"), folder)
    # The venv has textbound installed: shadowed here, so a script needing it fails.
    (site / "textbound").mkdir()
    (site / "textbound" / "__init__.py").write_text("raise ImportError('a reproducer must not need textbound')\n")
    return site


def run_clean(script: Path, site: Path, tmp_path: Path, engine: str | None = None) -> subprocess.CompletedProcess:
    """``script`` run in an empty folder with only ``site`` importable (and the venv's packages); with
    ``engine``, a copy of it importing that module instead of its own."""
    if engine is not None:
        text = re.sub(r"^import \S+ as engine$", f"import {engine} as engine", script.read_text(), count=1, flags=re.M)
        script = tmp_path / f"swapped-{script.name}"
        script.write_text(text)
    clean = tmp_path / "clean"
    clean.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(site)}
    result = subprocess.run([sys.executable, str(script)], cwd=clean, env=env, capture_output=True, text=True,
                            timeout=120)
    assert list(clean.iterdir()) == []
    return result


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

    site = engine_site(tmp_path, ENGINE)
    result = run_clean(scripts[0], site, tmp_path)
    assert result.returncode == 1, result.stderr
    expected, actual = result.stdout.splitlines()
    assert expected.startswith("expected: ' ") and actual.startswith("actual:   '")
    assert run_clean(scripts[0], site, tmp_path, engine="impl").returncode == 0


def test_a_run_without_tokenizer_divergences_writes_no_script(tmp_path, capsys):
    main(["check", "--family", "gpt2", "--component", "stops", "--budget", "quick", "--jobs", "1",
          "--report-dir", str(tmp_path / "run")])
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "out")]) == 0
    assert list((tmp_path / "out").iterdir()) == []
    (tmp_path / "file").write_text("")
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "file")]) == 2
    assert "--reproducers: " in capsys.readouterr().err


# One broken implementation per component, checked at the quick budget on gpt2: (component, module,
# environment of the run).
BROKEN = [
    ("detokenizer", "tests.one_bug.deltas_lstripped", {}),
    ("stops", "tests.one_bug.stops_finish_drops_held", {}),
    ("chat", "tests.broken_chat_impl", {"TEXTBOUND_CHAT_BUGS": "tojson_ascii"}),
    ("tools", "tests.broken_tools_impl.empty_content", {}),
]


@pytest.mark.parametrize(("component", "engine", "env"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_component_gets_a_script_that_fails_on_the_bug_and_passes_on_impl(tmp_path, capsys, monkeypatch,
                                                                              component, engine, env):
    monkeypatch.delenv("TEXTBOUND_TEMPLATES", raising=False)  # the family's own template (impl's ChatML) only
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    run, out = tmp_path / "run", tmp_path / "reproducers"
    main(["check", "--impl", engine, "--family", "gpt2", "--component", component, "--budget", "quick",
          "--jobs", "1", "--report-dir", str(run)])
    capsys.readouterr()
    assert main(["triage", str(run), "--no-explain", "--reproducers", str(out)]) == 0
    printed = capsys.readouterr().out.split("reproducers:\n", 1)[1]
    scripts = sorted(out.glob("*.py"))
    assert scripts, printed
    assert all(line.startswith(f"  {component}/") for line in printed.splitlines()), printed
    site = engine_site(tmp_path, engine.removesuffix(".empty_content"))
    for script in scripts:
        text = script.read_text()
        assert not re.search(r"^(import|from) (textbound|oracles|tokenizers|transformers)\b", text, re.M)
        assert f"import {engine} as engine" in text and "EXPECTED = " in text
        failing = run_clean(script, site, tmp_path)
        assert failing.returncode == 1, (script.name, failing.stdout, failing.stderr)
        assert failing.stdout.startswith("expected: ") and "\nactual:   " in failing.stdout
        passing = run_clean(script, site, tmp_path, engine="impl")
        assert passing.returncode == 0, (script.name, passing.stdout, passing.stderr)
