"""``textbound triage DIR --reproducers OUT`` for the node engines: a self-contained ``.mjs`` with the
data and the reference's answer inline, that exits 1 while the engine's bug is there."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from textbound.adapters.hf_jinja import JS_ENGINES_DIR
from textbound.checks import Subject, run_check
from textbound.cli import main
from textbound.naming.divergence import Case
from textbound.plan.implementation import Implementation
from textbound.triage.js_reproducer import HF_JINJA, JS_TOKENIZERS, PACKAGES, reference_answer, run_script

from .families import family_path

NEEDS_NODE = pytest.mark.skipif(
    shutil.which("node") is None or not all((JS_ENGINES_DIR / "node_modules" / p).is_dir() for p in PACKAGES.values()),
    reason=f"node or the packages of {JS_ENGINES_DIR} are missing (npm ci --prefix engines/js)")

# @huggingface/jinja's strip(chars) strips whitespace whatever chars says, deep in a longer template.
STRIP_TEMPLATE = "\n".join([
    "{%- set greeting = 'Hello' %}",
    "{%- for message in messages %}",
    "{%- if message['role'] == 'system' %}<<SYS>>{{ message['content'] }}<</SYS>>",
    "{%- elif message['role'] == 'user' %}[INST]{{ message['content'].strip('\\n') }}[/INST]",
    "{%- else %}{{ message['content'] }}{{ eos_token }}",
    "{%- endif %}",
    "{%- endfor %}",
    "{%- if add_generation_prompt %}{{ greeting }}{% endif %}",
])


def _run_folder(tmp_path, impl: str, case: Case) -> str:
    """A report folder holding the one divergence the check finds on ``case`` (a record as a run writes it)."""
    found = run_check(Subject(case.family, family_path(case.family), Implementation(impl)), case)
    assert found is not None
    run = tmp_path / "run"
    run.mkdir()
    record = {"component": case.component, "family": case.family, "property": case.property,
              "signature": found.signature, "input": case.input, "minimized_input": case.input,
              "expected": found.expected, "actual": found.actual, "first_difference": found.first_difference,
              "oracle_version": "", "reproduce": "(made by the test)"}
    (run / "divergences.jsonl").write_text(json.dumps(record) + "\n")
    (run / "summary.json").write_text(json.dumps({"impl": impl, "families": {case.family: str(family_path(case.family))}}))
    return str(run)


def _written(capsys, run: str, out) -> list:
    capsys.readouterr()
    assert main(["triage", run, "--no-explain", "--reproducers", str(out)]) == 0
    printed = capsys.readouterr().out
    scripts = sorted(out.glob("*.mjs"))
    assert scripts, printed
    return scripts


@NEEDS_NODE
def test_a_template_engine_bug_gets_a_script_on_a_minimized_template_that_exits_1(tmp_path, capsys):
    case = Case("chat", "render", "gpt2", {
        "template": "test:strip", "template_source": STRIP_TEMPLATE,
        "messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": " t\n"}],
        "add_generation_prompt": True, "variables": {"eos_token": "</s>"}})
    [script] = _written(capsys, _run_folder(tmp_path, HF_JINJA, case), tmp_path / "out")
    text = script.read_text()
    assert "textbound" not in re.sub(r"^//.*$", "", text, flags=re.M)  # only comments name it
    template = json.loads(re.search(r"^const TEMPLATE = (.*);$", text, re.M).group(1))
    assert "strip('\\n')" in template and "<<SYS>>" not in template and len(template) < len(STRIP_TEMPLATE) // 2
    context = json.loads(re.search(r"^const CONTEXT = (.*);$", text, re.M).group(1))
    expected = json.loads(re.search(r"^const EXPECTED = (.*);$", text, re.M).group(1))
    assert expected == reference_answer(template, context) and " t" in expected["text"]
    result = run_script(script)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == f"expected: {json.dumps(expected, separators=(',', ':'))}"


@NEEDS_NODE
def test_a_js_tokenizer_bug_gets_a_script_on_a_minimized_tokenizer_json_that_exits_1(tmp_path, capsys):
    # bert's BPE has a "##" continuing_subword_prefix, which @huggingface/tokenizers 0.2.0 ignores.
    case = Case("tokenizer", "encode", "bert", {"text": "hello world", "add_special_tokens": False})
    [script] = _written(capsys, _run_folder(tmp_path, JS_TOKENIZERS, case), tmp_path / "out")
    text = script.read_text()
    spec = json.loads(re.search(r"^const TOKENIZER_JSON = (.*);$", text, re.M).group(1))
    original = json.loads((family_path("bert") / "tokenizer.json").read_text())
    assert len(spec["model"]["vocab"]) < len(original["model"]["vocab"]) // 4
    result = run_script(script)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("expected: [")


@NEEDS_NODE
def test_a_script_exits_0_where_the_engine_agrees_with_the_reference(tmp_path):
    from textbound.triage.js_reproducer import chat_script
    from textbound.triage.reproducer import Target

    source, context = "{{ messages[0]['content'].strip() }}!", {"messages": [{"role": "user", "content": " Hi\n"}]}
    target = Target(Case("chat", "render", "gpt2", {"template": "test:agrees"}), "chat/render/none", HF_JINJA)
    script = tmp_path / "agrees.mjs"
    script.write_text(chat_script(target, source, context, "test", script.name))
    result = run_script(script)
    assert result.returncode == 0 and result.stdout.startswith('expected: {"text":"Hi!"}')
