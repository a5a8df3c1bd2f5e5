"""A light install: the core runs ``textbound check``, and what an extra brings is said when missing.

A package is made missing by ``sys.modules[name] = None`` (its import then fails, as for a package
never installed); the oracle libraries' answers are cached per process, so each test clears them.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from textbound import oracles
from textbound.adapters import ENGINE_EXTRAS, EngineMissing, require
from textbound.cli import EXIT_OK, EXIT_SETUP, main
from textbound.families import FamilyError, embedded_family, gguf_family
from textbound.oracles import LIBRARIES, Library, MissingExtra, lacking
from textbound.oracles.disagreements import second_oracles
from textbound.oracles.tokenizers_oracle import TokenizersOracle

ROOT = Path(__file__).resolve().parent.parent
SECOND_ORACLES = ("llguidance", "outlines_core", "tiktoken")  # modules of textbound[second-oracles] (numpy stays:
# transformers needs it, and hypothesis looks it up in sys.modules)
NOT_PROVIDED = ("structured/differential", "structured/mask")


@pytest.fixture
def missing(monkeypatch):
    """Makes the named modules unimportable for the test: ``missing("tiktoken")``."""
    def make_missing(*modules: str) -> None:
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)
        oracles._problem.cache_clear()
    yield make_missing
    oracles._problem.cache_clear()


def requirements() -> dict[str | None, set[str]]:
    """pyproject.toml's requirements, by extra (None: the core), each as ``name+specifier``."""
    tomllib = pytest.importorskip("tomllib", reason="pyproject.toml is read with Python 3.11's tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {None: set(project["dependencies"]), **{extra: set(listed) for extra, listed in
                                                   project["optional-dependencies"].items()}}


def test_pyproject_states_the_oracle_libraries_as_the_oracles_do():
    """textbound.oracles.LIBRARIES is the one statement of the supported versions and extras."""
    listed = requirements()
    for library in LIBRARIES.values():
        assert library.requirement in listed[library.extra], library
    for package, extra in ENGINE_EXTRAS.items():
        assert any(re.match(rf"{re.escape(package)}\b", requirement) for requirement in listed[extra]), package


def test_all_is_every_extra_but_the_session_engines_and_dev_brings_what_the_tests_import():
    listed = requirements()
    everything = {extra for extra in listed if extra not in (None, "all", "llama-cpp", "mlx-lm", "litellm", "mistralrs")}
    assert listed["all"] == {f"textbound[{','.join(sorted(everything, key=list(listed).index))}]"}
    assert "textbound[oracles,second-oracles,families]" in listed["dev"]
    assert {"pytest", "pytest-xdist", "nox"} <= {re.split(r"[<>=]", r)[0] for r in listed["dev"]}


def test_a_library_at_an_unsupported_version_is_named_with_its_extra(monkeypatch):
    monkeypatch.setitem(LIBRARIES, "tiktoken", Library("tiktoken", "tiktoken", ">=999", "second-oracles"))
    problem = lacking(["tokenizers", "tiktoken"])
    assert isinstance(problem, MissingExtra)
    assert set(problem.problems) == {"tiktoken"}
    assert re.fullmatch(r"tiktoken \S+ is installed, textbound supports >=999: pip install 'textbound\[second-oracles\]'",
                        str(problem))


def test_an_adapter_names_the_extra_of_its_engine(missing):
    missing("tiktoken")
    with pytest.raises(EngineMissing, match=re.escape("pip install 'textbound[second-oracles]'")):
        require("tiktoken")
    with pytest.raises(EngineMissing, match=re.escape("pip install 'textbound[engines]'")):
        require("minijinja", "no_such_module_for_minijinja")


def test_a_second_oracle_not_installed_is_left_out_not_raised(missing):
    family = embedded_family("gpt2").path  # byte-level BPE: tiktoken can read it
    assert [type(o).__name__ for o in second_oracles(family)] == ["TiktokenOracle"]
    missing("tiktoken")
    assert second_oracles(family) == []
    assert TokenizersOracle.from_dir(family).encode("hi") is not None  # the first oracle is untouched


def test_check_without_second_oracles_completes_and_says_what_is_not_provided_once(missing, tmp_path, capsys):
    missing(*SECOND_ORACLES)
    code = main(["check", "--family", "gpt2", "--family", "bert", "--component", "tokenizer,structured",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == EXIT_OK, out
    assert summary["harness_errors"] == []
    for prop in NOT_PROVIDED:  # once a run, whatever the families, with the extra that installs it
        notes = [note for note in summary["notes"] if note.startswith(f"{prop}: not provided")]
        assert len(notes) == 1, summary["notes"]
        assert notes[0].endswith("llguidance is not installed, outlines-core is not installed: "
                                 "pip install 'textbound[second-oracles]'"), notes[0]
        assert out.count(f"note: {prop}: not provided") == 1
        assert sorted(s["family"] for s in summary["skipped"] if f"{s['component']}/{s.get('property')}" == prop) \
            == ["bert", "gpt2"]
    checked = {f"{p['component']}/{p['property']}" for p in summary["properties"] if p["cases"]}
    assert not checked & set(NOT_PROVIDED)
    assert {"structured/sound", "structured/complete", "structured/guarantee", "tokenizer/encode"} <= checked
    second = [note for note in summary["notes"] if "no second opinion" in note]
    assert len(second) == 2 and all("tiktoken is not installed" in note for note in second)
    assert "## Not checked" in (tmp_path / "report.md").read_text()


def test_replaying_a_case_whose_oracle_is_not_installed_is_one_line_and_exit_2(missing, capsys):
    missing(*SECOND_ORACLES)
    case = {"component": "structured", "property": "mask", "family": "gpt2",
            "input": {"schema": {"type": "integer"}, "oracles": ["llguidance"], "seed": 0}}
    assert main(["replay", "--family", "gpt2", json.dumps(case)]) == EXIT_SETUP
    err = capsys.readouterr().err.strip()
    assert err == ("textbound: llguidance is not installed, outlines-core is not installed: "
                   "pip install 'textbound[second-oracles]'")


def test_a_gguf_file_without_the_gguf_package_names_the_families_extra(missing, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTBOUND_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    missing("gguf")
    with pytest.raises(FamilyError, match=re.escape("pip install 'textbound[families]'")):
        gguf_family(model)
