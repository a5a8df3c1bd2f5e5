"""Triage: expected and actual aligned with the first difference marked, signatures grouped, and
the difference between two runs."""
from __future__ import annotations

import json

import pytest

from textbound.cli import EXIT_DIVERGED, EXIT_OK, main
from textbound.families import build_family
from textbound.records.alignment import align, record_alignment, render_alignment
from textbound.records.run_folder import load_run
from textbound.naming.shape import Vocabulary
from textbound.triage.causes import diff_runs, triage_text

FAMILY = "gpt2"


@pytest.fixture(scope="module")
def gpt2() -> Vocabulary:
    return Vocabulary(build_family(FAMILY))


def test_ids_align_token_by_token_with_pieces_and_bytes(gpt2):
    import tokenizers

    oracle = tokenizers.Tokenizer.from_file(str(build_family(FAMILY) / "tokenizer.json"))
    expected = oracle.encode("say 12 things").ids
    actual = expected[:2] + expected[3:]  # the third token dropped
    alignment = align(expected, actual, gpt2)
    assert alignment.columns == ("id", "piece", "bytes")
    first = alignment.rows[alignment.first]
    assert first.expected[0] == str(expected[2]) and first.actual is None
    assert [row.differs for row in alignment.rows[:alignment.first]] == [False] * alignment.first
    # the piece is the oracle's token string; its bytes are what that token stands for
    piece = oracle.id_to_token(expected[2])
    assert first.expected[1] == json.dumps(piece, ensure_ascii=False)
    pieces_bytes = b"".join(bytes.fromhex(row.expected[2]) for row in alignment.rows if row.expected)
    assert pieces_bytes == "say 12 things".encode()


def test_texts_align_character_by_character():
    alignment = align("café 1", "cafe 1")
    assert alignment.columns == ("char", "code point", "bytes")
    first = alignment.rows[alignment.first]
    assert first.expected == ('"é"', "U+00E9", "c3 a9") and first.actual == ('"e"', "U+0065", "65")
    assert alignment.first == 3


def test_nested_values_are_aligned_where_they_first_differ():
    alignment = align({"vocab_size": 5, "tokens": ["a", "b"]}, {"vocab_size": 5, "tokens": ["a", "c"]})
    assert alignment.path == ".tokens[1]"
    assert alignment.rows[alignment.first].expected == ('"b"', "U+0062", "62")
    stops = align(["abc", True], ["abd", True])
    assert stops.path == "[0]" and stops.first == 2


def test_lists_of_objects_align_item_by_item():
    calls = [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]
    alignment = align(calls, calls[:1])
    assert alignment.columns == ("item",) and alignment.first == 1
    assert alignment.rows[1].expected == (json.dumps(calls[1]),) and alignment.rows[1].actual is None



def test_ids_outside_the_vocabulary_align_without_a_piece(gpt2):
    alignment = align([5], [-1, 2 ** 70], gpt2)  # an implementation may emit any integer
    assert [row.actual for row in alignment.rows] == [("-1", "?", "?"), (str(2 ** 70), "?", "?")]


def test_a_record_whose_alignment_fails_is_shown_plainly(monkeypatch):
    def broken_align(*args):
        raise TypeError("unhashable type: 'dict'")

    monkeypatch.setattr("textbound.records.alignment.align", broken_align)
    record = {"family": FAMILY, "expected": [{"name": "f"}], "actual": []}
    lines = render_alignment(record_alignment(record, {}))
    assert any("[{'name': 'f'}]" in line for line in lines)
    assert lines[-1] == "   (no aligned view: TypeError: unhashable type: 'dict')"

def test_long_sequences_show_a_window_around_the_first_difference():
    expected = list(range(100))
    actual = expected[:60] + [999] + expected[61:]
    alignment = align(expected, actual)
    assert alignment.hidden_before == 54 and alignment.rows[alignment.first].expected == ("60",)
    lines = render_alignment(alignment)
    assert any(line.startswith(">> 60") for line in lines)
    assert "... 54 equal row(s) before" in "\n".join(lines)


def run_broken(report_dir, impl="tests.broken_impl", *extra) -> None:
    main(["check", "--impl", impl, "--family", FAMILY, "--component", "tokenizer", "--budget", "quick",
          "--jobs", "1", "--report-dir", str(report_dir), *extra])


def test_triage_and_diff_of_real_runs(tmp_path, capsys):
    broken, clean = tmp_path / "broken", tmp_path / "clean"
    run_broken(broken)
    run_broken(clean, "textbound.impl")
    capsys.readouterr()
    text = triage_text(load_run(broken))
    signature = "tokenizer/encode/ids: drops tokens at the end"
    assert f"1. {signature}   NEW" in text
    records = load_run(broken).records
    assert f"{len(records)} divergence(s): gpt2 ({len(records)})" in text
    assert "\n>> " in text and "replay: textbound replay --impl tests.broken_impl" in text

    assert main(["diff", str(clean), str(broken)]) == EXIT_DIVERGED
    assert f"  + {signature} ({len(records)})" in capsys.readouterr().out
    assert main(["diff", str(broken), str(clean)]) == EXIT_OK
    assert f"  - {signature} (was {len(records)})" in capsys.readouterr().out
    same = diff_runs(load_run(broken), load_run(broken))
    assert same.unchanged == [signature] and not same.new and not same.fixed


def test_a_signature_is_not_fixed_where_the_new_run_did_not_check(tmp_path, capsys):
    broken, elsewhere = tmp_path / "broken", tmp_path / "elsewhere"
    run_broken(broken)
    main(["check", "--family", FAMILY, "--component", "stops", "--budget", "quick", "--jobs", "1",
          "--report-dir", str(elsewhere)])
    result = diff_runs(load_run(broken), load_run(elsewhere))
    assert result.fixed == [] and result.not_checked == ["tokenizer/encode/ids: drops tokens at the end"]


def test_triage_of_a_folder_that_is_no_report_is_a_setup_error(tmp_path, capsys):
    assert main(["triage", str(tmp_path)]) == 2
    assert "not a report folder" in capsys.readouterr().err
