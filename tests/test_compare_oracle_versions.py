"""``textbound compare FAMILY --oracle-versions A,B``: the oracles of each side in a child process
whose pinned packages come first (oracles/remote.py, textbound/compare/oracle_versions.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest
from tokenizers import AddedToken, Tokenizer

from textbound.oracles.remote import RemoteOracles, from_wire, to_wire
from tests.test_compare import compare
from textbound.cli import main
from textbound.compare.command import EXIT_BAD_INPUT, EXIT_SAME
from textbound.families import build_family

INSTALLED = f"tokenizers=={version('tokenizers')}"
OLDER = "tokenizers==0.23.1"  # within transformers' range, published on PyPI


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TEXTBOUND_CACHE", str(tmp_path / "cache"))


def test_what_crosses_the_wire_is_what_compare_reads():
    tokenizer = Tokenizer.from_file(str(build_family("gpt2") / "tokenizer.json"))
    [encoding] = tokenizer.encode_batch(["Hi there"], add_special_tokens=False)
    value = {0: AddedToken("<s>", lstrip=True, special=True), "ids": {1, 2}, "encoding": encoding}
    back = from_wire(json.loads(json.dumps(to_wire(value))))
    assert (back[0].content, back[0].lstrip, back[0].special) == ("<s>", True, True)
    assert back["ids"] == {1, 2} and back["encoding"].ids == encoding.ids and back["encoding"].tokens == encoding.tokens


def test_a_child_answers_as_the_oracle_would_and_raises_its_class(tmp_path):
    family = build_family("gpt2")
    oracles = RemoteOracles(family, overlay=None)
    try:
        assert oracles.versions["tokenizers"] == version("tokenizers")
        oracle = oracles.root("oracle")
        assert oracle.encode("Hi there") == Tokenizer.from_file(str(family / "tokenizer.json")).encode(
            "Hi there", add_special_tokens=False).ids
        assert oracle.vocab_size > 0 and isinstance(oracle.special_ids, frozenset)
        with pytest.raises(Exception) as raised:
            oracle.decode("not ids")
        assert type(raised.value).__name__ == "TypeError"
    finally:
        oracles.close()


def test_an_overlay_comes_first_in_the_child(tmp_path):
    overlay = tmp_path / "overlay" / "tokenizers-99.0.dist-info"
    overlay.mkdir(parents=True)
    (overlay / "METADATA").write_text("Metadata-Version: 2.1\nName: tokenizers\nVersion: 99.0\n", encoding="utf-8")
    oracles = RemoteOracles(build_family("gpt2"), overlay=overlay.parent)
    try:
        assert oracles.versions["tokenizers"] == "99.0"
    finally:
        oracles.close()


def test_the_installed_versions_on_both_sides_are_identical(tmp_path):
    code, summary = compare(build_family("gpt2"), None, tmp_path, "--oracle-versions", f"{INSTALLED},{INSTALLED}",
                            "--component", "tokenizer,detokenizer")
    assert (code, summary["changes"]) == (EXIT_SAME, [])
    assert summary["oracles"]["old"].startswith(f"tokenizers {version('tokenizers')}")


@pytest.mark.parametrize("value", ["tokenizers==0.23.1", "numpy==2.0,tokenizers==0.23.1", "tokenizers>=1,tokenizers==2"])
def test_malformed_versions_are_refused(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exited:
        main(["compare", str(build_family("gpt2")), "--oracle-versions", value])
    assert exited.value.code == EXIT_BAD_INPUT and "--oracle-versions" in capsys.readouterr().err


def test_oracle_versions_and_new_are_one_or_the_other(tmp_path, capsys):
    family = str(build_family("gpt2"))
    assert main(["compare", family, family, "--oracle-versions", f"{INSTALLED},{INSTALLED}"]) == EXIT_BAD_INPUT
    assert main(["compare", family]) == EXIT_BAD_INPUT
    assert "give OLD and NEW, or one family with --oracle-versions A,B" in capsys.readouterr().err


def _pypi_reachable() -> bool:
    done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "tokenizers"],
                          capture_output=True, text=True, timeout=120)
    return done.returncode == 0 and OLDER.partition("==")[2] in done.stdout


def test_an_older_tokenizers_from_pypi_runs_the_same_cases(tmp_path):
    if not _pypi_reachable():
        pytest.skip(f"PyPI does not answer here: {OLDER} cannot be installed")
    code, summary = compare(build_family("gpt2"), None, tmp_path, "--oracle-versions", f"{OLDER},{INSTALLED}",
                            "--component", "tokenizer")
    assert code in (0, 1)
    assert summary["oracles"]["old"].startswith("tokenizers 0.23.1")
    assert sum(p["cases"] for p in summary["properties"]) > 1000
