"""Bad input, table-driven: every file a command reads, broken in each way it can be, is one line on
stderr naming the file and what is wrong, exit 2, no traceback, and no report already written is
changed or lost."""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from textbound.cli import EXIT_SETUP, main
from textbound.families import embedded_family
from textbound.files import MAX_FILE_BYTES

FAMILY = "gpt2"


# -- the ways a file breaks: each changes the file at ``path`` and says what the message names -----

def truncated(path: Path) -> str:
    """Cut in the middle of a string (of its last line, for JSON lines)."""
    text = path.read_text(encoding="utf-8")
    cut = text.rfind('"', 0, len(text) - 2 if text.endswith("\n") else len(text)) + 1
    path.write_text(text[:max(cut, 1)], encoding="utf-8")
    return "not valid JSON: line "


def empty(path: Path) -> str:
    path.write_text("")
    return "empty, expected JSON"


def wrong_type(path: Path) -> str:
    path.write_text("[1, 2]\n")
    return "$: expected an object, found an array"


def not_utf8(path: Path) -> str:
    path.write_bytes(b'{"a": "\xff\xfe"}')
    return "not UTF-8 text (byte 7 is 0xff)"


def a_folder(path: Path) -> str:
    path.unlink()
    path.mkdir()
    return "a folder, not a file"


def a_symlink_loop(path: Path) -> str:
    path.unlink()
    path.symlink_to(path.name)
    return "cannot be read: Too many levels of symbolic links"


def too_large(path: Path) -> str:
    """A sparse file of 2 GB: refused by its size, never read."""
    os.truncate(path, 2 * 2 ** 30)
    return f"more than the {MAX_FILE_BYTES} a file read may have"


JSON_BREAKS = [truncated, empty, wrong_type, not_utf8, a_folder, a_symlink_loop, too_large]
# A template's text is the case's business (a syntax error is an error both sides must raise alike):
# only a file that cannot be read as text at all fails the setup.
TEXT_BREAKS = [not_utf8, a_folder, a_symlink_loop, too_large]
FAMILY_FILES = {"tokenizer.json": JSON_BREAKS, "tokenizer_config.json": JSON_BREAKS,
                "generation_config.json": JSON_BREAKS, "special_tokens_map.json": JSON_BREAKS,
                "chat_template.jinja": TEXT_BREAKS}


def cases(files: dict[str, list[Callable]]) -> list:
    return [pytest.param(name, breaking, id=f"{name}-{breaking.__name__}")
            for name, breaks in files.items() for breaking in breaks]


def snapshot(folder: Path) -> dict[str, tuple]:
    """Each file's size, time and (unless it is the sparse 2 GB one) bytes: what must not change."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns,
                                         p.read_bytes() if p.stat().st_size < MAX_FILE_BYTES else None)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_setup_failure(capsys, *args: str) -> str:
    """Runs the command, which must fail its setup; returns its one line of stderr."""
    assert main(list(args)) == EXIT_SETUP
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.fixture
def family_dir(tmp_path) -> Path:
    """A copy of the embedded gpt2 family's folder, with every optional file, to break."""
    folder = tmp_path / "family"
    shutil.copytree(embedded_family(FAMILY).path, folder)
    (folder / "generation_config.json").write_text('{"eos_token_id": 0}\n')
    (folder / "special_tokens_map.json").write_text('{"eos_token": "<|endoftext|>"}\n')
    (folder / "chat_template.jinja").write_text("{{ messages[0].content }}")
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A real report folder with divergences (the README's broken implementation), to copy and break."""
    folder = tmp_path_factory.mktemp("report") / "run"
    main(["check", "--impl", "tests.broken_impl", "--family", FAMILY, "--component", "tokenizer",
          "--budget", "quick", "--jobs", "1", "--report-dir", str(folder)])
    assert (folder / "divergences.jsonl").stat().st_size > 0
    return folder


# -- the table ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("filename", "breaking"), cases(FAMILY_FILES))
@pytest.mark.parametrize("command", ["check", "replay", "bench"])
def test_a_broken_family_file_is_one_line_before_any_case(tmp_path, capsys, family_dir, command, filename, breaking):
    expected = breaking(family_dir / filename)
    report_dir = tmp_path / "report"
    args = {"check": ["--budget", "quick", "--report-dir", str(report_dir)],
            "replay": ['{"component": "stops", "property": "stream", "family": "family", "input": {}}'],
            "bench": ["--seconds", "0.01"]}[command]
    line = run_setup_failure(capsys, command, "--model-dir", str(family_dir), *args)
    assert line.startswith(f"textbound: family family: {family_dir / filename}: ") and expected in line, line
    assert not report_dir.exists()  # no case ran, nothing was written


def vocab_a_list(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["vocab"] = list(data["model"]["vocab"])
    path.write_text(json.dumps(data), encoding="utf-8")
    return "$.model.vocab: expected an object, found an array (tokenizers: invalid type: sequence, expected a map"


def test_a_tokenizer_json_the_oracle_refuses_names_the_json_path(tmp_path, capsys, family_dir):
    expected = vocab_a_list(family_dir / "tokenizer.json")
    line = run_setup_failure(capsys, "check", "--model-dir", str(family_dir), "--report-dir", str(tmp_path / "r"))
    assert line.startswith(f"textbound: family family: {family_dir / 'tokenizer.json'}: {expected}")
    assert line.endswith(")") and "at line 1 column" in line  # the oracle's own words close it


@pytest.mark.parametrize(("filename", "config", "message"), [
    ("tokenizer_config.json", {"chat_template": 5},
     "$.chat_template: expected a string or an array of {name, template} objects, found a number"),
    ("tokenizer_config.json", {"chat_template": [{"name": "default"}]},
     "$.chat_template[0].template: expected a string, found nothing"),
    ("tokenizer_config.json", {"bos_token": 5},
     '$.bos_token: expected a string, an AddedToken object ("__type": "AddedToken", a string content) or null, '
     "found a number"),
    ("tokenizer_config.json", {"eos_token": {"content": "x"}},
     '$.eos_token: expected a string, an AddedToken object ("__type": "AddedToken", a string content) or null, '
     'found an object without "__type": "AddedToken"'),
    ("special_tokens_map.json", {"additional_special_tokens": ["a", {"content": 3}]},
     "$.additional_special_tokens[1]: expected a string or an object with a string content, found an object"),
])
def test_a_config_field_transformers_refuses_is_one_line_naming_its_path(tmp_path, capsys, family_dir, filename,
                                                                         config, message):
    # each of these makes transformers raise when it loads the folder, in every chat case
    (family_dir / filename).write_text(json.dumps(config))
    line = run_setup_failure(capsys, "check", "--model-dir", str(family_dir), "--report-dir", str(tmp_path / "r"))
    assert line == f"textbound: family family: {family_dir / filename}: {message}"


def test_the_config_fields_transformers_takes_pass_the_check(family_dir):
    from textbound.families import Family, check_family_files
    (family_dir / "tokenizer_config.json").write_text(json.dumps(
        {"eos_token": {"__type": "AddedToken", "content": "x"}, "pad_token": None,
         "chat_template": [{"name": "default", "template": "{{ 1 }}"}]}))
    (family_dir / "special_tokens_map.json").write_text(json.dumps({"eos_token": {"content": "x"}}))
    check_family_files(Family("family", family_dir, "folder"))


@pytest.mark.parametrize("command", ["check", "compare"])
def test_a_tokenizer_json_the_oracle_panics_on_is_one_line_on_the_terminal(tmp_path, capfd, family_dir, monkeypatch,
                                                                           command):
    # tokenizers panics (a PanicException, no Exception) on a merge whose token is not in the vocab,
    # and Rust prints the panic, with RUST_BACKTRACE its backtrace, straight to file descriptor 2
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    new = tmp_path / "new"
    shutil.copytree(family_dir, new)
    (new / "tokenizer.json").write_text(json.dumps(
        {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}}), encoding="utf-8")
    args = {"check": ["check", "--model-dir", str(new)], "compare": ["compare", str(family_dir), str(new)]}[command]
    assert main([*args, "--report-dir", str(tmp_path / "r")]) == EXIT_SETUP
    err = capfd.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{new / 'tokenizer.json'}: tokenizers cannot load it" in lines[0], err
    assert "range end index 2 out of range for slice of length 1" in lines[0]  # the panic's own message
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("breaking", JSON_BREAKS)
def test_a_broken_baseline_is_one_line(tmp_path, capsys, breaking):
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"entries": [{"signature": "tokenizer/encode/x", "reason": "known"}]}\n')
    expected = breaking(baseline)
    line = run_setup_failure(capsys, "check", "--family", FAMILY, "--baseline", str(baseline),
                             "--report-dir", str(tmp_path / "r"))
    assert line.startswith(f"textbound: --baseline {baseline}: ") and expected in line, line
    assert not (tmp_path / "r").exists()


REPORT_FILES = {"summary.json": JSON_BREAKS,
                # an empty divergences.jsonl is a run without divergences, not a broken one
                "divergences.jsonl": [b for b in JSON_BREAKS if b is not empty]}


@pytest.mark.parametrize(("filename", "breaking"), cases(REPORT_FILES))
@pytest.mark.parametrize("command", ["triage", "diff-old", "diff-new", "merge"])
def test_a_broken_report_folder_is_one_line_and_nothing_is_lost(tmp_path, capsys, report, command, filename,
                                                                breaking):
    broken, good = tmp_path / "broken", tmp_path / "good"
    shutil.copytree(report, broken)
    shutil.copytree(report, good)
    expected = breaking(broken / filename)
    before = snapshot(broken), snapshot(good)
    out = tmp_path / "merged"
    args = {"triage": ["triage", str(broken)], "diff-old": ["diff", str(broken), str(good)],
            "diff-new": ["diff", str(good), str(broken)], "merge": ["merge", str(out), str(good), str(broken)]}[command]
    line = run_setup_failure(capsys, *args)
    where = f"{broken / filename}: line " if filename.endswith(".jsonl") and breaking in (truncated, wrong_type) \
        else f"{broken / filename}: "
    assert line.startswith(f"textbound: {where}") and expected.removeprefix("$: ") in line, line
    assert (snapshot(broken), snapshot(good)) == before and not out.exists()


def test_a_second_run_into_a_report_folder_keeps_the_first_one_whole(tmp_path, capsys, report):
    folder = tmp_path / "run"
    shutil.copytree(report, folder)
    first = snapshot(folder)
    assert main(["check", "--family", FAMILY, "--component", "tokenizer", "--budget", "quick", "--jobs", "1",
                 "--report-dir", str(folder)]) == 0
    (kept,) = (folder / "earlier").iterdir()
    assert f"textbound: --report-dir {folder} held an earlier run's report: it is kept in {kept}" in capsys.readouterr().err
    assert snapshot(kept) == {name: state for name, state in first.items() if "/" not in name}
    # the second run's report holds its own records only: impl agrees with the oracle
    assert (folder / "divergences.jsonl").read_text() == "" and json.loads((folder / "summary.json").read_text())["new"] == []
    assert main(["triage", str(kept)]) == 0 and "1 signature(s)" in capsys.readouterr().out


def test_a_report_folder_whose_records_are_a_folder_is_kept_aside_too(tmp_path):
    folder = tmp_path / "run"
    (folder / "divergences.jsonl").mkdir(parents=True)
    assert main(["check", "--family", FAMILY, "--component", "tokenizer", "--budget", "quick", "--jobs", "1",
                 "--report-dir", str(folder)]) == 0
    (kept,) = (folder / "earlier").iterdir()
    assert (kept / "divergences.jsonl").is_dir() and (folder / "divergences.jsonl").read_text() == ""


def cut_off(path: Path) -> None:
    """The last record cut in the middle, as a kill or a full disk mid-write leaves it."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:len(text) - len(text.rstrip("\n").rsplit("\n", 1)[-1]) // 2 - 1], encoding="utf-8")


@pytest.mark.parametrize("stopped", ["killed before its summary", "interrupted"])
def test_an_incomplete_runs_cut_off_last_record_is_dropped_and_the_rest_read(tmp_path, capsys, report, stopped):
    folder = tmp_path / "run"
    shutil.copytree(report, folder)
    records = (folder / "divergences.jsonl").read_text(encoding="utf-8").count("\n")
    if stopped == "interrupted":
        summary = json.loads((folder / "summary.json").read_text())
        (folder / "summary.json").write_text(json.dumps({**summary, "completed": False, "interrupted": "SIGTERM"}))
    else:
        (folder / "summary.json").unlink()
    cut_off(folder / "divergences.jsonl")
    before = snapshot(folder)
    assert main(["triage", str(folder)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (f"textbound: {folder / 'divergences.jsonl'}: line {records} is cut off (the run stopped "
                            "while writing it); the records before it are read\n")
    state = "SIGTERM" if stopped == "interrupted" else "killed before it wrote summary.json"
    assert f"{records - 1} divergence(s), 0 oracle disagreement(s); run INTERRUPTED ({state})" in captured.out
    # a gate comparing against it fails: what the run did not reach was not checked
    assert main(["diff", str(report), str(folder)]) == 1
    assert f"NEW is incomplete ({state})" in capsys.readouterr().out
    assert snapshot(folder) == before


@pytest.mark.parametrize("occupied", ["a shard itself", "an earlier merge"])
def test_merge_into_a_folder_holding_a_report_is_refused_and_it_is_kept(tmp_path, capsys, report, occupied):
    earlier = tmp_path / "earlier"
    shutil.copytree(report, earlier)
    before = snapshot(earlier)
    shards = [str(earlier)] if occupied == "a shard itself" else [str(report)]
    line = run_setup_failure(capsys, "merge", str(earlier), *shards)
    assert line == f"textbound: {earlier}: holds a report already; merge into a new folder"
    assert snapshot(earlier) == before


@pytest.mark.parametrize(("case", "message"), [
    ('{"component": "tokenizer", "property": "encode", "fam', "CASE: not valid JSON: line 1 column 50: Unterminated string starting at"),
    ("", "CASE: empty, expected JSON"),
    ("[1, 2]", "CASE: $: expected an object, found an array"),
    ('{"component": "tokenizer", "property": "encode", "family": "gpt2", "input": "a"}',
     "$.input: expected an object, found a string"),
    ('{"component": "tokenizer", "family": "gpt2", "input": {}}', "$.property: expected a string, found nothing"),
    ('{"component": "tokeniser"}', "unknown component 'tokeniser' (known: tokenizer, detokenizer, stops, chat, "
                                   "tools, structured)"),
    # a field of the wrong type or value, refused by the oracle or the check, before any comparison
    ('{"component": "tokenizer", "property": "encode", "family": "gpt2", "input": {"text": 5}}',
     "tokenizer/encode cannot take its input: TypeError: TextInputSequence must be str"),
    ('{"component": "stops", "property": "stream", "family": "gpt2", "input": {"text": "a", "stops": 3}}',
     "stops/stream cannot take its input: TypeError: 'int' object is not iterable"),
    ('{"component": "tools", "property": "whole", "family": "gpt2", "input": {"format": "nope", "text": "x"}}',
     "tools/whole cannot take its input: ValueError: unknown tool-call format 'nope' (known: hermes, qwen3_coder, "
     "llama3_json, mistral, deepseek_r1, deepseek_v31, gpt_oss, kimi_k2, glm45, minimax_m2)"),
])
def test_a_broken_case_is_one_line(capsys, case, message):
    line = run_setup_failure(capsys, "replay", "--family", FAMILY, case)
    assert line == f"textbound: the case is not valid: {message}"


def test_a_case_no_check_has_is_one_line_naming_the_known_ones(capsys):
    line = run_setup_failure(capsys, "replay", "--family", FAMILY,
                             '{"component": "tokenizer", "property": "nope", "family": "gpt2", "input": {}}')
    assert line.startswith("textbound: the case is not valid: no check tokenizer/nope (known: chat/ids, "), line
    assert "tokenizer/encode, " in line and line.endswith(")")


@pytest.mark.parametrize("breaking", [b for b in JSON_BREAKS if b is not a_symlink_loop])
def test_compare_of_a_broken_family_file_is_one_line(tmp_path, capsys, family_dir, breaking):
    new = tmp_path / "new"
    shutil.copytree(family_dir, new)
    expected = breaking(new / "generation_config.json")
    line = run_setup_failure(capsys, "compare", str(family_dir), str(new))
    assert f"{new / 'generation_config.json'}: " in line and expected in line, line
