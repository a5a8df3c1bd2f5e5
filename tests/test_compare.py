"""``textbound compare``: version pairs built from the shared and embedded families, each with one
known change, must show that change, minimized, and identical copies nothing."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.families import NEEDS_MODELS, NEEDS_TEMPLATES, SHARED
from textbound.cli import main
from textbound.compare.command import EXIT_BAD_INPUT, EXIT_CHANGED, EXIT_SAME
from textbound.families import build_family
from textbound.oracles.chat_oracle import TEMPLATES_ENV

# A template whose render of n messages ends in a marker the render of n + 1 does not have there.
MARKED_END = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}END"
PLAIN = "{% for m in messages %}<|endoftext|>{{ m.role }}: {{ m.content }}\n{% endfor %}"


@pytest.fixture(autouse=True)
def own_templates_only(monkeypatch):
    """Only the versions' own templates, except where a test asks for the shared ones (they are many)."""
    monkeypatch.delenv(TEMPLATES_ENV, raising=False)


def copy_pair(source: Path, tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(source, old)
    shutil.copytree(source, new)
    return old, new


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def compare(old: Path, new: Path | None, tmp_path: Path, *options: str) -> tuple[int, dict]:
    """compare at the quick budget; ``new`` None for one family under --oracle-versions."""
    report = tmp_path / "report"
    sides = [str(old)] if new is None else [str(old), str(new)]
    code = main(["compare", *sides, "--budget", "quick", "--report-dir", str(report), *options])
    return code, json.loads((report / "summary.json").read_text(encoding="utf-8"))


def changes(summary: dict, signature: str) -> list[dict]:
    return [c for c in summary["changes"] if c["signature"] == signature]


def qwen3_pair(tmp_path: Path) -> tuple[Path, Path]:
    return copy_pair(SHARED["qwen3"], tmp_path)


def test_identical_copies_are_identical(tmp_path):
    old, new = copy_pair(build_family("gpt2"), tmp_path)
    code, summary = compare(old, new, tmp_path)
    assert (code, summary["changes"]) == (EXIT_SAME, [])
    assert sum(p["cases"] for p in summary["properties"]) > 1000
    for name in ("report.md", "junit.xml", "report.html"):
        assert (tmp_path / "report" / name).is_file()
    assert "None: both versions behave the same" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


@NEEDS_MODELS
def test_identical_shared_copies_are_identical(tmp_path):
    old, new = qwen3_pair(tmp_path)
    assert compare(old, new, tmp_path)[0] == EXIT_SAME


@NEEDS_MODELS
def test_two_different_families_differ_everywhere(tmp_path, capsys):
    code, summary = compare(SHARED["llama2"], SHARED["qwen3"], tmp_path)
    assert code == EXIT_CHANGED
    found = set(summary["new"])
    assert {"tokenizer/vocab: entries renumbered", "tokenizer/added_tokens: token added", "chat/template: added",
            "chat/render: OLD refuses, NEW renders", "stops/eos_set: changed",
            "detokenizer/decode: text differs"} <= found
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 + len(found)  # one line per signature, however many subjects


def _drop_added_token(content: str):
    def change(data: dict) -> None:
        data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] != content]
    return change


@NEEDS_MODELS
def test_a_removed_added_token_is_found_with_the_text_it_changes(tmp_path):
    old, new = qwen3_pair(tmp_path)
    edit_json(new / "tokenizer.json", _drop_added_token("</think>"))
    edit_json(new / "tokenizer_config.json", lambda c: c["added_tokens_decoder"].pop("151668"))
    code, summary = compare(old, new, tmp_path, "--component", "tokenizer")
    assert code == EXIT_CHANGED
    [removed] = changes(summary, "tokenizer/added_tokens: token removed")
    assert removed["subject"] == "'</think>'" and removed["example"]["text"] == "</think>"
    assert removed["example"]["old_ids"] == [151668] and len(removed["example"]["new_ids"]) > 1
    assert changes(summary, "tokenizer/vocab: entries removed")[0]["old"] == [[151668, "</think>"]]
    [encode] = [c for c in changes(summary, "tokenizer/encode: different pieces") if "</think>" in c["subject"]]
    assert encode["example"] == {"text": "</think>"}  # minimized from the token in its contexts


@NEEDS_MODELS
def test_a_flipped_lstrip_is_found_with_a_minimal_text(tmp_path):
    old, new = qwen3_pair(tmp_path)

    def flip(data: dict) -> None:
        next(t for t in data["added_tokens"] if t["content"] == "<|im_start|>")["lstrip"] = True
    edit_json(new / "tokenizer.json", flip)
    code, summary = compare(old, new, tmp_path, "--component", "tokenizer")
    assert code == EXIT_CHANGED
    [flag] = changes(summary, "tokenizer/added_tokens: lstrip changed")
    assert (flag["subject"], flag["old"], flag["new"]) == ("'<|im_start|>'", False, True)
    text = flag["example"]["text"]
    assert text.endswith("<|im_start|>") and text[0].isspace() and len(text) == len("<|im_start|>") + 1
    assert flag["example"]["old_ids"] != flag["example"]["new_ids"]
    assert all(len(c["example"]["text"]) <= 2 + len("<|im_start|>")
               for c in changes(summary, "tokenizer/encode: different pieces") if c["example"])


@NEEDS_MODELS
def test_a_dropped_newline_in_the_template_is_found_on_the_smallest_request(tmp_path):
    old, new = qwen3_pair(tmp_path)

    def drop(config: dict) -> None:
        marker = "'<|im_start|>assistant\\n'"
        assert marker in config["chat_template"]
        config["chat_template"] = config["chat_template"].replace(marker, "'<|im_start|>assistant'")
    edit_json(new / "tokenizer_config.json", drop)
    code, summary = compare(old, new, tmp_path, "--component", "chat")
    assert code == EXIT_CHANGED
    assert changes(summary, "chat/template: source changed")[0]["subject"] == "family"
    [render] = changes(summary, "chat/render: text differs")
    assert render["old"] == render["new"] + "\n"
    assert len(render["example"]["messages"]) == 1 and render["example"]["add_generation_prompt"] is True
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "### `chat/render: text differs`" in report and '>> "\\n"' in report


@NEEDS_MODELS
def test_flipped_add_bos_token_and_a_changed_eos_list_are_found(tmp_path):
    old, new = copy_pair(SHARED["llama2"], tmp_path)
    edit_json(new / "tokenizer_config.json", lambda c: c.update(add_bos_token=not c["add_bos_token"]))
    edit_json(old / "generation_config.json", lambda g: g.update(eos_token_id=2))
    edit_json(new / "generation_config.json", lambda g: g.update(eos_token_id=[2, 0]))
    code, summary = compare(old, new, tmp_path, "--component", "tokenizer,stops")
    assert code == EXIT_CHANGED
    [setting] = changes(summary, "tokenizer/special_tokens: tokenizer_config setting changed")
    assert (setting["subject"], setting["old"], setting["new"]) == ("add_bos_token", True, False)
    [eos] = changes(summary, "stops/eos_set: changed")
    assert eos["old"] == [[2, "</s>"]] and eos["new"] == [[0, "<unk>"], [2, "</s>"]]


def _with_template(folder: Path, template: str) -> None:
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")


def test_prefix_stability_changes_and_tool_formats_are_found(tmp_path):
    old, new = copy_pair(build_family("gpt2"), tmp_path)
    _with_template(old, PLAIN)
    _with_template(new, MARKED_END + "{# <tool_call> #}")
    code, summary = compare(old, new, tmp_path, "--component", "chat,tools")
    assert code == EXIT_CHANGED
    [prefix] = changes(summary, "chat/prefix: stability changed")
    assert (prefix["old"], prefix["new"]) == ("stable", "text")
    assert len(prefix["example"]["messages"]) == 2 and prefix["example"]["shorter"].endswith("END")
    assert not prefix["example"]["longer"].startswith(prefix["example"]["shorter"])
    assert changes(summary, "tools/format: picked format changed")[0]["new"] == "hermes"
    assert changes(summary, "tools/call_render: text differs")
    assert summary["prefix_stability"]["family"]["old"]["stable"] is True


def test_allow_accepts_listed_changes_and_names_unused_entries(tmp_path):
    old, new = copy_pair(build_family("gpt2"), tmp_path)
    _with_template(new, PLAIN)
    code, summary = compare(old, new, tmp_path, "--component", "chat")
    assert code == EXIT_CHANGED
    allow = tmp_path / "allow.json"
    entries = [{"signature": s, "reason": "the new template is intended"} for s in summary["new"]]
    allow.write_text(json.dumps({"entries": [*entries, {"signature": "stops/eos_set: changed", "reason": "x"}]}))
    code, summary = compare(old, new, tmp_path, "--component", "chat", "--allow", str(allow))
    assert code == EXIT_SAME and summary["new"] == [] and summary["allowed"]
    assert [e["signature"] for e in summary["fixed"]] == ["stops/eos_set: changed"]


@pytest.mark.parametrize("problem", ["missing", "no tokenizer.json", "bad json", "bad allow"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, problem):
    old, new = copy_pair(build_family("gpt2"), tmp_path)
    options = []
    if problem == "missing":
        shutil.rmtree(new)
    elif problem == "no tokenizer.json":
        (new / "tokenizer.json").unlink()
    elif problem == "bad json":
        (new / "tokenizer_config.json").write_text("{", encoding="utf-8")
    else:
        (tmp_path / "allow.json").write_text("[]", encoding="utf-8")
        options = ["--allow", str(tmp_path / "allow.json")]
    assert main(["compare", str(old), str(new), "--report-dir", str(tmp_path / "r"), *options]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("textbound compare: ") and "\n" not in err and "Traceback" not in err


@NEEDS_MODELS
@NEEDS_TEMPLATES
def test_prefix_stability_is_reported_on_every_shared_template(tmp_path, monkeypatch):
    from tests.families import TEMPLATES
    monkeypatch.setenv(TEMPLATES_ENV, str(TEMPLATES))
    old, new = qwen3_pair(tmp_path)
    code, summary = compare(old, new, tmp_path, "--component", "chat")
    assert code == EXIT_SAME
    shared = {f"shared:{p.stem}" for p in TEMPLATES.glob("*.jinja")}
    assert shared <= summary["prefix_stability"].keys()
    broken = [entry["old"] for entry in summary["prefix_stability"].values() if not entry["old"]["stable"]]
    assert broken, "no shared template breaks prefix stability: the property cannot fire"
    for entry in broken:
        example = entry["example"]
        if entry["kind"] == "text":
            assert not example["longer"].startswith(example["shorter"])
        else:
            assert example["longer"][:len(example["shorter"])] != example["shorter"]


def test_two_hub_revisions_are_compared(monkeypatch, tmp_path):
    old, new = copy_pair(build_family("gpt2"), tmp_path)
    edit_json(new / "tokenizer_config.json", lambda c: c.update(add_bos_token=not c.get("add_bos_token", False)))
    revisions = {"old": old, "new": new}
    monkeypatch.setattr("huggingface_hub.snapshot_download",
                        lambda repo_id, revision, allow_patterns, cache_dir: str(revisions[revision]))
    code, summary = compare("org/name@old", "org/name@new", tmp_path, "--component", "tokenizer")
    assert code == EXIT_CHANGED
    assert (summary["old_version"], summary["new_version"]) == ("org/name@old", "org/name@new")
    assert changes(summary, "tokenizer/special_tokens: tokenizer_config setting changed")
