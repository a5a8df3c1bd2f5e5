"""``textbound bench --schemas DIR``: the coverage table of a folder of schemas, per engine."""
from __future__ import annotations

import json

from textbound.bench.schemas import compile_in_child, reason_class
from textbound.cli import main


def test_the_coverage_table_counts_compiled_and_refused_schemas_per_engine(tmp_path, capsys):
    (tmp_path / "plain.json").write_text(json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}}))
    (tmp_path / "negated.json").write_text(json.dumps({"type": "array", "items": {"not": {"minimum": 3}}}))
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["bench", "--schemas", str(tmp_path)]) == 0
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and not line.startswith("| engine")}
    assert rows["impl"][1:4] == ["1", "1", "0"]
    assert "'not'" in rows["impl"][4]
    assert set(rows) == {"impl", "outlines-core", "llguidance"}
    assert rows["llguidance"][1:4] == ["1", "1", "0"]  # llguidance implements no "not" either


def test_a_folder_without_schemas_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["bench", "--schemas", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"textbound: no JSON schema in {tmp_path}"


def test_an_engine_that_hangs_is_timed_out_and_one_that_raises_is_refused_with_its_reason():
    assert compile_in_child(lambda schema: [None for _ in iter(int, 1)], {}, 0.5) == ("timed out", "")
    assert compile_in_child(lambda schema: 1 / 0, {}, 10) == ("refused", "division by zero")
    assert reason_class("unsupported keyword 'not' at $.a") == "unsupported keyword 'not'"


# {"a": 1, "b": 2} has both branches: impl writes each with the other's negation, anyOf would not.
OVERLAPPING_ONE_OF = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}


def test_every_compiled_schema_is_sampled_and_an_unsound_impl_fails_the_run(tmp_path, capsys):
    (tmp_path / "one_of.json").write_text(json.dumps(OVERLAPPING_ONE_OF))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "plain.json").write_text(json.dumps({"type": "object", "properties": {"a": {"type": "string"}}}))
    assert main(["bench", "--schemas", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "<!-- impl: 2 of 2 compiled schemas sampled" in out and "0 unsound" in out
    assert main(["bench", "--impl", "textbound.mutants.structured_one_of_as_any_of", "--schemas", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "1 unsound" in out and "one_of.json: unsound: " in out


def test_a_check_that_outlives_its_cpu_time_leaves_the_schema_compiled_but_not_sampled():
    def compile_then_hang(schema):
        return lambda seed: [None for _ in iter(int, 1)]
    outcome, reason = compile_in_child(compile_then_hang, {}, 10, seed=0, sample_seconds=0.5)
    assert (outcome, reason.split(":")[0]) == ("compiled", "not sampled")
