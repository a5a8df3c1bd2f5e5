"""``textbound compare`` and ``--model-dir`` on GGUF files, read by transformers (oracles/gguf_oracle.py).

The GGUF files are written by llama.cpp's gguf-py from embedded families (tests/gguf_files.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.families import NEEDS_MODELS, SHARED
from tests.gguf_files import write_gguf
from tests.test_compare import changes, compare
from textbound.cli import main
from textbound.compare.command import EXIT_BAD_INPUT, EXIT_CHANGED, EXIT_SAME
from textbound.families import FamilyError, build_family, folder_family
from textbound.oracles.gguf_oracle import SOURCE_FILE

pytest.importorskip("gguf", reason="the gguf package writes the tests' GGUF files")


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TEXTBOUND_CACHE", str(tmp_path / "cache"))


def llama3_gguf(path: Path, **config_changes) -> Path:
    return write_gguf(build_family("llama3"), path, pre="llama-bpe", architecture="llama",
                      config_changes=config_changes)


def test_a_gguf_is_a_family_read_by_transformers(tmp_path):
    family = folder_family(llama3_gguf(tmp_path / "llama3.gguf"))
    assert (family.name, family.origin) == ("llama3", "gguf")
    source = json.loads((family.path / SOURCE_FILE).read_text(encoding="utf-8"))
    assert source["gguf"] == "llama3.gguf" and source["reader"].startswith("transformers ")
    assert (family.path / "tokenizer.json").is_file()


def test_identical_gguf_copies_are_identical_and_a_flipped_bos_flag_is_found(tmp_path):
    first, second = llama3_gguf(tmp_path / "a.gguf"), llama3_gguf(tmp_path / "b.gguf")
    code, summary = compare(first, second, tmp_path / "same", "--component", "tokenizer")
    assert (code, summary["changes"]) == (EXIT_SAME, [])
    assert summary["old_version"] == str(first)
    flipped = llama3_gguf(tmp_path / "no-bos.gguf", add_bos_token=False)
    code, summary = compare(first, flipped, tmp_path / "flipped", "--component", "tokenizer")
    assert code == EXIT_CHANGED
    [lost] = changes(summary, "tokenizer/encode_with_special_tokens: different pieces")
    bos = 3000  # <|begin_of_text|> in the embedded llama3 family
    assert lost["old"] == [bos, *lost["new"]]
    [stage] = changes(summary, "tokenizer/vocab: pipeline stage changed")
    assert stage["subject"] == "post_processor"


def test_a_gguf_beside_the_folder_it_was_made_from_lists_what_the_file_carries_differently(tmp_path):
    folder = build_family("llama3")
    code, summary = compare(folder, llama3_gguf(tmp_path / "llama3.gguf"), tmp_path, "--component", "tokenizer")
    assert code == EXIT_CHANGED and summary["new_version"].endswith("llama3.gguf")
    # What transformers makes of such a file (5.24): byte-level BPE read through GPT2Tokenizer gains
    # its default <|endoftext|>, and the vocabulary's ignore_merges is not carried.
    options = {c["subject"]: (c["old"], c["new"]) for c in changes(summary, "tokenizer/vocab: model option changed")}
    assert options.get("model.ignore_merges") == (True, False)
    assert [c["subject"] for c in changes(summary, "tokenizer/added_tokens: token added")] == ["'<|endoftext|>'"]


@pytest.mark.parametrize("content, words", [(b"", "not a GGUF file"), (b"PK\x03\x04zip", "not a GGUF file"),
                                            (b"GGUF\x03\x00", "transformers cannot read its tokenizer"),
                                            # a header whose count of keys runs past the end: the reader's
                                            # exception alone, not the traceback's source lines
                                            (b"GGUF\x03\x00\x00\x00" + bytes(8) + b"\x01" + bytes(7),
                                             "transformers cannot read its tokenizer: struct.error: unpack_from")])
def test_a_broken_gguf_is_one_line_and_exit_2(tmp_path, capsys, content, words):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(content)
    code = main(["compare", str(broken), str(build_family("gpt2")), "--report-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert code == EXIT_BAD_INPUT and words in err and str(broken) in err and len(err.splitlines()) == 1
    assert "^^^" not in err and " | " not in err, err
    with pytest.raises(FamilyError, match=words):
        folder_family(broken)


@NEEDS_MODELS
def test_a_gguf_of_a_shared_family_shows_the_normalizer_transformers_drops(tmp_path):
    folder = SHARED["qwen3"]
    made = write_gguf(folder, tmp_path / "qwen3.gguf", pre="qwen2", architecture="qwen3")
    code, summary = compare(folder, made, tmp_path, "--component", "tokenizer")
    assert code == EXIT_CHANGED
    stages = {c["subject"]: (c["old"], c["new"]) for c in changes(summary, "tokenizer/vocab: pipeline stage changed")}
    assert "normalizer" in stages and "NFC" in str(stages["normalizer"][0]) and stages["normalizer"][1] is None
    assert changes(summary, "tokenizer/encode: different pieces")  # compatibility ideographs, no longer NFC'd
