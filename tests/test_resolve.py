"""Where families come from: embedded, $TEXTBOUND_MODELS, --model-dir and --hub (on local folders)."""
from __future__ import annotations

import shutil

import pytest

from textbound.families import MODELS_ENV, FamilyError, build_family, hub_family, resolve


@pytest.fixture
def models_root(tmp_path, monkeypatch):
    family = build_family("gpt2")
    shutil.copytree(family, tmp_path / "mine")
    (tmp_path / "not-a-family").mkdir()
    monkeypatch.setenv(MODELS_ENV, str(tmp_path))
    return tmp_path


def test_models_folder_families(models_root):
    names = [f.name for f in resolve(["mine"], [], [])]
    assert names == ["mine"]
    everything = [f.name for f in resolve([], [], [])]
    assert "mine" in everything and "gpt2" in everything and "not-a-family" not in everything


def test_unknown_family_names_the_alternatives(models_root):
    with pytest.raises(FamilyError, match="unknown family nope.*embedded: .*gpt2.*mine"):
        resolve(["nope"], [], [])


def test_model_dir(models_root):
    (family,) = resolve([], [str(models_root / "mine")], [])
    assert family.origin == "folder" and family.name == "mine"
    with pytest.raises(FamilyError, match="no tokenizer.json"):
        resolve([], [str(models_root / "not-a-family")], [])


def test_hub_path_on_a_local_snapshot(models_root):
    family = hub_family(str(models_root / "mine"))
    assert family.origin == "hub" and (family.path / "tokenizer.json").is_file()


def test_hub_download_failure_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FamilyError, match="--hub textbound-test/absent: cannot download"):
        hub_family("textbound-test/absent")


def test_a_hub_revision_is_asked_for_by_name(monkeypatch, models_root):
    asked = []

    def snapshot_download(repo_id, revision, allow_patterns, cache_dir):
        asked.append((repo_id, revision))
        return str(models_root / "mine")
    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    family = hub_family("org/name@v1.0")
    assert asked == [("org/name", "v1.0")] and family.name == "org--name@v1.0"
    hub_family("org/name")
    assert asked[-1] == ("org/name", None)
    with pytest.raises(FamilyError, match="expected ORG/NAME or ORG/NAME@REVISION"):
        hub_family("org/name@")


def test_a_hub_download_failure_is_one_line_on_the_terminal(monkeypatch, capsys, tmp_path):
    # huggingface_hub's own message spans two lines (what failed, then advice on the connection)
    import huggingface_hub

    from textbound.cli import EXIT_SETUP, main

    def unreachable(**_):
        raise OSError("Got: ConnectError: Name or service not known\nAn error happened while trying to locate the "
                      "files on the Hub.\n Please check your internet connection and try again.")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    assert main(["check", "--hub", "textbound-test/absent", "--report-dir", str(tmp_path / "r")]) == EXIT_SETUP
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["textbound: --hub textbound-test/absent: cannot download: OSError: Got: ConnectError: Name or "
                     "service not known An error happened while trying to locate the files on the Hub. Please check "
                     "your internet connection and try again."]
