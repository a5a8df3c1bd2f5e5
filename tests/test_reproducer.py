"""``textbound triage DIR --reproducers OUT``: a standalone script per signature of an --impl module,
in its own API, with the data (a minimized tokenizer.json where it needs a tokenizer) and the
reference's answer inline, that fails on the broken implementation without textbound and passes
on impl."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from textbound import impl
from textbound.checks import Subject, case_source, run_check
from textbound.checks.tools import round_trip
from textbound.cli import main
from textbound.families import embedded_family
from textbound.naming.divergence import Case
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation
from textbound.triage.scripts.registry import in_docstring

from .families import NEEDS_TEMPLATES, family_path
from .test_js_reproducer import _run_folder

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "tests.one_bug.decode_drops_leading_space"


def engine_site(tmp_path: Path, *modules: str) -> Path:
    """A folder holding only what the engine imports: textbound.impl and the engine's own modules
    (files of this repository, with their packages' ``__init__``), and none of the harness."""
    site = tmp_path / "site"
    shutil.copytree(Path(impl.__file__).parent, site / "textbound" / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "textbound" / "__init__.py").touch()  # the venv's textbound is shadowed: a script needing the harness fails
    for module in modules:
        *packages, name = module.split(".")
        folder = site.joinpath(*packages)
        folder.mkdir(parents=True, exist_ok=True)
        for depth in range(1, len(packages) + 1):
            site.joinpath(*packages[:depth], "__init__.py").touch()
        shutil.copy(importlib.util.find_spec(module).origin, folder)
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
    assert run_clean(scripts[0], site, tmp_path, engine="textbound.impl").returncode == 0


def test_a_run_without_tokenizer_divergences_writes_no_script(tmp_path, capsys):
    main(["check", "--family", "gpt2", "--component", "stops", "--budget", "quick", "--jobs", "1",
          "--report-dir", str(tmp_path / "run")])
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "out")]) == 0
    assert list((tmp_path / "out").iterdir()) == []
    (tmp_path / "file").write_text("")
    capsys.readouterr()
    assert main(["triage", str(tmp_path / "run"), "--reproducers", str(tmp_path / "file")]) == 2
    captured = capsys.readouterr()  # refused before the triage is printed: the command did nothing
    assert captured.out == "" and captured.err == (f"textbound: --reproducers {tmp_path / 'file'}: "
                                                   f"{tmp_path / 'file'} is a file, not a folder\n")


# One broken implementation per component, checked at the quick budget on gpt2: (component, module,
# the chat bugs switched on, the properties its scripts reproduce).
BROKEN = {
    "detokenizer": ("detokenizer", "tests.one_bug.deltas_lstripped", None, {"stream"}),
    "detokenizer-held": ("detokenizer", "tests.one_bug.detokenizer_holds_last_character", None,
                         {"stream", "decode_stream"}),
    "stops": ("stops", "tests.one_bug.stops_finish_drops_held", None, {"stream", "pipeline"}),
    "chat": ("chat", "tests.broken_chat_impl", "tojson_ascii", {"render"}),
    "chat-sanitized": ("chat", "tests.broken_chat_impl", "sanitize_ignored", {"sanitized_ids"}),
    "tools-whole": ("tools", "tests.broken_tools_impl.empty_content", None, {"whole"}),
    "tools-tokens": ("tools", "tests.one_bug.deltas_lstripped", None, {"tokens"}),
}


def chat_bugs(monkeypatch, bugs: str) -> None:
    """tests.broken_chat_impl with only ``bugs`` on, here (an earlier test may have imported it) and in
    the scripts' processes; the family's own template (impl's ChatML) only, so that the run is short."""
    import tests.broken_chat_impl

    monkeypatch.setenv("TEXTBOUND_CHAT_BUGS", bugs)
    monkeypatch.setattr(tests.broken_chat_impl, "BUGS", frozenset(bugs.split(",")))
    monkeypatch.delenv("TEXTBOUND_TEMPLATES", raising=False)


def checked_run(tmp_path: Path, capsys, engine: str, component: str) -> tuple[Path, str]:
    """A quick-budget run of ``engine``'s ``component`` on gpt2, triaged with --reproducers: the
    scripts' folder and the reproducers' lines."""
    run, out = tmp_path / "run", tmp_path / "reproducers"
    main(["check", "--impl", engine, "--family", "gpt2", "--component", component, "--budget", "quick",
          "--jobs", "1", "--report-dir", str(run)])
    capsys.readouterr()
    assert main(["triage", str(run), "--no-explain", "--reproducers", str(out)]) == 0
    return out, capsys.readouterr().out.split("reproducers:\n", 1)[1]


def assert_fails_then_passes(script: Path, engine: str, site: Path, tmp_path: Path) -> None:
    """The script needs no harness nor reference library, exits 1 on ``engine`` and 0 on impl."""
    text = script.read_text()
    assert not re.search(r"^(import|from) (textbound(?!\.(impl|mutants)\b)|tokenizers|transformers)\b", text, re.M)
    assert f"import {engine} as engine" in text and "EXPECTED = " in text
    failing = run_clean(script, site, tmp_path)
    assert failing.returncode == 1, (script.name, failing.stdout, failing.stderr)
    assert failing.stdout.startswith("expected: ") and "\nactual:   " in failing.stdout
    passing = run_clean(script, site, tmp_path, engine="textbound.impl")
    assert passing.returncode == 0, (script.name, passing.stdout, passing.stderr)


@pytest.mark.parametrize("broken", BROKEN.values(), ids=BROKEN.keys())
def test_each_component_gets_a_script_that_fails_on_the_bug_and_passes_on_impl(tmp_path, capsys, monkeypatch, broken):
    component, engine, bugs, properties = broken
    if bugs:
        chat_bugs(monkeypatch, bugs)
    out, printed = checked_run(tmp_path, capsys, engine, component)
    scripts = sorted(out.glob("*.py"))
    assert {line.split("/")[1] for line in printed.splitlines() if line.endswith(".py")} == properties, printed
    assert len(scripts) == len(printed.splitlines()), printed  # every signature got its script
    site = engine_site(tmp_path, engine.removesuffix(".empty_content"))
    for script in scripts:
        assert_fails_then_passes(script, engine, site, tmp_path)


HERMES_CALL = 'Hi <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'


@pytest.mark.parametrize(("prop", "variant"), [("stream", "leaky_tags"), ("deltas", "index_from_one"),
                                               ("deltas", "fixed_hold_back")])
def test_tool_stream_scripts_fail_on_the_broken_parser_and_pass_on_impl(tmp_path, capsys, prop, variant):
    # These signatures come from a record of the check itself: at the quick budget their minimization
    # meets a tool_reference crash (a harness error) before any is recorded.
    import tests.broken_tools_impl  # noqa: F401 - registers the variants as modules

    engine = f"tests.broken_tools_impl.{variant}"
    run = _run_folder(tmp_path, engine, Case("tools", prop, "gpt2", {"format": "hermes", "text": HERMES_CALL,
                                                                     "splits": [5, 20]}))
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(tmp_path / "out")]) == 0
    scripts = list((tmp_path / "out").glob("*.py"))
    assert len(scripts) == 1, capsys.readouterr().out
    assert_fails_then_passes(scripts[0], engine, engine_site(tmp_path, "tests.broken_tools_impl"), tmp_path)


@NEEDS_TEMPLATES
def test_a_round_trip_bug_gets_the_script_of_the_whole_parse_of_its_part(tmp_path, capsys):
    """A parser dropping reasoning reads a rendered message's assistant part otherwise than the
    reference; tools/round_trip leaves that to the whole case of the part, which the case source
    yields just before it (glm45: ``<think>the weather 東京 \\</think>``, ``Sure.``, two calls),
    so the one script is that case's (tools/round_trip itself records only a template and the
    reference disagreeing, which gets no script)."""
    import tests.broken_tools_impl  # noqa: F401 - registers the variants as modules

    engine = "tests.broken_tools_impl.reasoning_dropped"
    subject = Subject("gpt2", family_path("gpt2"), Implementation(engine))
    drawn = list(case_source(embedded_family("gpt2"), "tools", BUDGETS["quick"], 0))
    pairs = [(part, trip) for part, trip in zip(drawn, drawn[1:]) if trip.property == "round_trip"]
    assert pairs and all(part.property == "whole" and part.input["text"] == round_trip(trip.input).part
                         for part, trip in pairs)
    dropped = [(part, trip) for part, trip in pairs if round_trip(trip.input).expected["reasoning_content"]]
    assert dropped, "no drawn message renders its reasoning: the broken parser has nothing to drop"
    part, trip = dropped[0]
    assert run_check(subject, trip) is None  # left to the whole case of the part
    run = _run_folder(tmp_path, engine, part)
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(tmp_path / "out")]) == 0
    scripts = list((tmp_path / "out").glob("*.py"))
    assert [script.name for script in scripts] == ["01-tools-whole-reasoning-content-differs.py"], capsys.readouterr().out
    assert_fails_then_passes(scripts[0], engine, engine_site(tmp_path, "tests.broken_tools_impl"), tmp_path)


BOUNDED = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9}}, "required": ["n"]}


def test_a_signature_without_a_script_is_named_with_the_reason(tmp_path, capsys):
    from tests.broken_structured_impl import variant, variant_name

    variant("vocabulary_refused")
    tools = [{"type": "function", "function": {"name": "pick", "parameters": BOUNDED}}]
    run = _run_folder(tmp_path, variant_name("vocabulary_refused"), Case("structured", "guarantee", "gpt2", {
        "seed": 1, "tools": tools, "name": "pick", "format": "hermes", "runs": 1}))
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(out)]) == 0
    printed = capsys.readouterr().out.split("reproducers:\n", 1)[1]
    assert printed == ("  structured/guarantee/refuses a vocabulary the oracle decodes token by token: no reproducer "
                       "(structured/guarantee is not scripted; scripted are chat/ids, chat/render, chat/sanitized_ids, "
                       "detokenizer/decode_stream, detokenizer/stream, stops/pipeline, stops/stream, "
                       "structured/complete, structured/differential, structured/errors, structured/sound, "
                       "tokenizer/decode, tokenizer/encode, tools/deltas, tools/stream, "
                       "tools/tokens, tools/whole)\n")
    assert list(out.iterdir()) == []


def test_a_structured_errors_script_fails_where_an_unsupported_keyword_is_accepted(tmp_path, capsys):
    from textbound.checks.structured_cases import UNSUPPORTED

    engine = "textbound.mutants.structured_one_of_as_any_of"
    run = _run_folder(tmp_path, engine, Case("structured", "errors", "gpt2", {
        "schema": {**BOUNDED, "oneOf": UNSUPPORTED["oneOf"]}, "keyword": "oneOf", "path": []}))
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(tmp_path / "out")]) == 0
    scripts = list((tmp_path / "out").glob("*.py"))
    assert len(scripts) == 1, capsys.readouterr().out
    assert_fails_then_passes(scripts[0], engine, engine_site(tmp_path, engine, "textbound.mutants.base"), tmp_path)


def test_structured_scripts_fail_on_a_schema_bug_and_pass_on_impl(tmp_path, capsys):
    engine = "textbound.mutants.structured_required_ignored"
    out, printed = checked_run(tmp_path, capsys, engine, "structured")
    scripts = sorted(out.glob("*.py"))
    # differential's wrong admits and rejects are sound and complete cases; a oneOf told apart by a
    # const keeps its branches without required, so the mutant may reject nothing valid
    kinds = {line.split("/")[1] for line in printed.splitlines() if line.endswith(".py")}
    assert "sound" in kinds and kinds <= {"sound", "complete"}, printed
    site = engine_site(tmp_path, engine, "textbound.mutants.base")
    for script in scripts:
        assert "SCHEMA = " in script.read_text() and "TEXT = " in script.read_text()
        assert_fails_then_passes(script, engine, site, tmp_path)


def test_a_chat_ids_script_holds_both_files_and_fails_on_the_tokenizer_bug(tmp_path, capsys):
    engine = "textbound.mutants.tokenizer_nbsp_as_space"
    run = _run_folder(tmp_path, engine, Case("chat", "ids", "gpt2", {
        "template": "project:chatml", "messages": [{"role": "user", "content": "a\u00a0b"}],
        "add_generation_prompt": True}))
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(tmp_path / "out")]) == 0
    scripts = list((tmp_path / "out").glob("*.py"))
    assert len(scripts) == 1, capsys.readouterr().out
    text = scripts[0].read_text()
    config = json.loads(re.search(r"^TOKENIZER_CONFIG_JSON = (.*)$", text, re.M).group(1)[1:-1])
    assert config["eos_token"] == "<|endoftext|>" and "chat_template" not in config  # the template is inline
    spec = json.loads(re.search(r"^TOKENIZER_JSON = (.*)$", text, re.M).group(1)[1:-1])
    assert len(spec["model"]["vocab"]) < 100  # from gpt2's 2000
    assert_fails_then_passes(scripts[0], engine, engine_site(tmp_path, engine, "textbound.mutants.base"), tmp_path)


@pytest.mark.parametrize("text", ["chat/render/text: writes non-ASCII characters as \\u escapes", 'a """ b', "x\\n"])
def test_a_signature_reads_back_from_the_scripts_docstring(text):
    assert ast.literal_eval(f'"""{in_docstring(text)}\n"""') == f"{text}\n"
