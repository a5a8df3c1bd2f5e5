"""tools/field_report.py: a field report's signatures are re-derived from its records under today's
kinds, triage verdicts follow the divergences to their new signatures, and a server engine's
per-family reports make one row."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from textbound.families import build_family
from textbound.plan.implementation import Implementation
from textbound.triage.causes import rekinded

from .families import NEEDS_MODELS, SHARED

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def field_report():
    spec = importlib.util.spec_from_file_location("field_report", ROOT / "tools" / "field_report.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["field_report"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules["field_report"]


def record(signature: str, expected, actual, family="gpt2", **more) -> dict:
    component, prop, _ = signature.split("/", 2)
    return {"signature": signature, "component": component, "property": prop, "family": family,
            "input": more.pop("input", {}), "minimized_input": None, "expected": expected, "actual": actual, **more}


def test_records_in_the_old_wording_get_todays_kinds():
    gpt2 = str(build_family("gpt2"))
    ids = [64, 275]  # "a", " b" in gpt2's byte-level vocabulary
    assert rekinded(record("tokenizer/decode/text differs at space (impl Ll)", " a", "a"), gpt2) == \
        "text: drops ' ' at the start"
    assert rekinded(record("tokenizer/encode/ids differ at Ll", ids, ids[:1]), gpt2) == "ids: drops tokens at the end"
    assert rekinded(record("stops/stream/output differs at Po", {"output": "ab##", "stopped": True},
                           {"output": "ab", "stopped": True}, input={"stops": ["##"]}), gpt2) == \
        "output: drops the stop string"
    assert rekinded(record("detokenizer/stream/shown text the whole decode changes, at Ll", "a b c", "ab"), gpt2) == \
        "shown text the whole decode changes: drops ' '"
    assert rekinded(record("chat/render/raised TypeError", None, None), gpt2) == "raised TypeError"  # worded as it was


def test_a_chat_render_gets_the_reading_transformers_renders_it_by():
    """An engine's render, recorded by its first differing character, is the request read as one of
    vLLM's content formats: transformers' own render of that reading says so."""
    from textbound.checks.chat import content_formats
    from textbound.oracles.chat_oracle import PROJECT_CHATML, render, resolve

    template = resolve(PROJECT_CHATML, None)
    messages = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    given = {"template": PROJECT_CHATML, "template_digest": template.digest, "messages": messages}
    as_string = dict(content_formats(messages))["string"]
    found = record("chat/render/text: inserts '\\n' before ASCII letters", render(template.source, messages),
                   render(template.source, as_string), input=given)
    assert rekinded(found, None) == "reads content as vLLM's 'string' content format"


def test_a_chat_text_kind_names_its_cause_and_an_error_is_worded_as_recorded():
    assert rekinded(record("chat/render/text: drops mixed text before '\\n'", "a\n\nb", "a\nb"), None) == \
        "text: drops '\\n'"  # whitespace alone, wherever the template put it
    assert rekinded(record("chat/render/text differs at Ll (impl Cc)", "ab", "a\x01b"), None) == "text: inserts text"
    # a shape kind is kept over today's first edit, which would merge an engine's unrelated bugs
    assert rekinded(record("chat/render/text: inserts ASCII letters before symbols", "a#", "ab#"), None) == \
        "text: inserts ASCII letters before symbols"
    assert rekinded(record("chat/render/raised ValueError where transformers raises TypeError", "x", "y"), None) == \
        "raised ValueError where transformers raises TypeError"


def test_a_whole_parse_tells_a_call_read_as_content_and_keeps_its_format():
    call = {"name": "f", "arguments": {}}
    expected = {"content": "", "reasoning_content": "", "calls": [call]}
    actual = {"content": "<tool_call>{}</tool_call>", "reasoning_content": "", "calls": []}
    found = record("tools/whole/hermes: content differs", expected, actual, input={"format": "hermes"},
                   first_difference={"field": "content"})
    assert rekinded(found, None) == "hermes: content differs: a call read as content"
    same_calls = {**expected, "content": "x"}
    assert rekinded({**found, "actual": same_calls}, None) == "hermes: content differs"


def test_old_signatures_of_one_shape_make_one_group_that_remembers_them(field_report):
    records = [record("tokenizer/decode/text differs at space (impl Ll)", " a", "a"),
               record("tokenizer/decode/text differs at space (impl Nd)", " 7", "7", family="qwen")]
    groups = field_report.group_signatures(records, {"gpt2": str(build_family("gpt2"))})
    assert list(groups) == ["tokenizer/decode/text: drops ' ' at the start"]
    group = groups["tokenizer/decode/text: drops ' ' at the start"]
    assert group["count"] == 2 and group["families"] == ["gpt2", "qwen"] and len(group["formerly"]) == 2


def test_an_engines_tool_parser_bugs_are_grouped_per_format(field_report):
    """The checks' tools kinds do not name the format (impl's formats share their code); an engine's
    parsers are one per format, so its report does, whether a record was made before or after."""
    records = [record("tools/whole/content differs", "a", "b", input={"format": "hermes"}),
               record("tools/whole/content differs", "a", "b", input={"format": "mistral"}),
               record("tools/whole/hermes: content differs", "a", "b", input={"format": "hermes"}),
               record("tools/whole/oracle disagreement: vllm hermes: content differs", "a", "b", input={"format": "hermes"}),
               record("tools/server/arguments invalid for the schema", "a", "b", input={"messages": []}),
               # a recorded group's example, made whatever the formats: kept as it was grouped
               record("tools/whole/raised ValueError", "a", "b", input={"format": "gpt_oss"}, weight=3)]
    assert list(field_report.group_signatures(records, {})) == [
        "tools/server/arguments invalid for the schema", "tools/whole/hermes: content differs",
        "tools/whole/mistral: content differs", "tools/whole/oracle disagreement: vllm hermes: content differs",
        "tools/whole/raised ValueError"]


def test_triage_verdicts_follow_the_divergences_to_their_new_signatures(field_report):
    old = {"e | a/b/text differs at Ll": {"verdict": "engine bug", "note": "one"},
           "e | a/b/text differs at Nd": {"verdict": "engine bug", "note": "one"},
           "e | a/c/text differs at *": {"verdict": "policy", "note": "two"},
           "e | a/d/x": {"verdict": "policy", "note": "three"},
           "e | z/*": {"verdict": "not applicable", "note": "kept"}}
    field = {"engines": {"e": {"signatures": {
        "a/b/text: drops ' '": {"formerly": ["a/b/text differs at Ll", "a/b/text differs at Nd"]},
        "a/c/text: y": {"formerly": ["a/c/text differs at Po", "a/b/text differs at Ll"]},
        "z/q/r": {}}}}}
    carried = field_report.carried_triage(old, field)
    assert carried["e | a/b/text: drops ' '"] == {"verdict": "engine bug", "note": "one"}
    assert carried["e | a/c/text: y"]["note"] == "triaged apart before the shape grouping: policy: two / engine bug: one"
    assert "e | z/*" in carried and "e | a/d/x" not in carried


def test_a_signature_made_of_parts_carries_all_their_links_over_a_glob(field_report):
    old = {"e | a/b/one": {"verdict": "engine bug", "note": "n1", "reproducer": "reproducers/1.py"},
           "e | a/b/two": {"verdict": "engine bug", "note": "n2", "reproducer": "reproducers/2.py", "upstream": "u"},
           "e | a/*": {"verdict": "textbound bug", "note": "written for the kinds it matched then"}}
    field = {"engines": {"e": {"signatures": {"a/b/both": {"formerly": ["a/b/one", "a/b/two"]}}}}}
    carried = field_report.carried_triage(old, field)["e | a/b/both"]
    assert carried["verdict"] == "engine bug" and carried["upstream"] == "u"
    assert carried["reproducer"] == ["reproducers/1.py", "reproducers/2.py"]


def test_a_regrouped_example_remembers_the_signature_it_was_recorded_under(field_report):
    """triage.json names the signatures of the last grouping: a group made of an example keeps it
    beside the ones that example's group was made of."""
    example = record("tokenizer/decode/text: drops mixed text at the start", " a", "a", weight=2,
                     formerly=["tokenizer/decode/text differs at space (impl Ll)"])
    groups = field_report.group_signatures([example], {"gpt2": str(build_family("gpt2"))})
    assert groups["tokenizer/decode/text: drops ' ' at the start"]["formerly"] == [
        "tokenizer/decode/text differs at space (impl Ll)", "tokenizer/decode/text: drops mixed text at the start"]


def test_a_server_engine_is_one_row_of_its_per_family_reports(field_report, tmp_path, monkeypatch):
    engine = field_report.Engine("srv", "textbound.adapters.server", ("tokenizer",), False,
                                 families=("gpt2", "qwen"), server=True)
    monkeypatch.setattr(field_report, "FIELD_DIR", tmp_path / "field")
    for port, family in enumerate(engine.families):
        folder = tmp_path / "field" / "srv" / family
        folder.mkdir(parents=True)
        summary = {"impl_version": f"llama.cpp server serving {family}.gguf at http://127.0.0.1:{port}",
                   "counts": [{"family": family, "component": "tokenizer", "cases": 3, "divergences": 1}]}
        (folder / "summary.json").write_text(json.dumps(summary))
        runs = tmp_path / "runs" / "srv" / family
        runs.mkdir(parents=True)
        (runs / "divergences.jsonl").write_text(json.dumps(record("tokenizer/decode/text: x", " a", "a", family)) + "\n")
    entry = field_report.collect(engine, tmp_path / "runs", {"missing": None, "not_applicable": {}}, {})
    assert entry["version"] == "llama.cpp server" and len(entry["counts"]) == 2
    assert entry["signatures"]["tokenizer/decode/text: drops ' ' at the start"]["count"] == 2


def test_every_reproducer_and_report_the_triage_links_exists(field_report):
    triage = json.loads(field_report.TRIAGE_FILE.read_text(encoding="utf-8"))
    assert field_report.dangling_links(triage) == {}
    assert any(field_report.linked_paths(entry, "reproducer") for entry in triage.values())


def test_a_link_to_a_missing_file_is_dangling_and_a_bug_without_a_reproducer_is_a_gap(field_report, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setattr(field_report, "FIELD_DIR", tmp_path)
    (tmp_path / "reproducers").mkdir()
    (tmp_path / "reproducers" / "here.py").write_text("")
    triage = {"e | a/b/*": {"verdict": "engine bug", "note": "n", "reproducer": "reproducers/here.py",
                            "report": ["upstream/e/gone.md"]},
              "e | a/c/x": {"verdict": "engine bug", "note": "m"}}
    assert field_report.dangling_links(triage) == {"e | a/b/*": ["upstream/e/gone.md"]}
    assert "[reproducer: here.py](reproducers/here.py)" in field_report.triage_line(triage, "e", "a/b/y")
    field = {"engines": {"e": {"signatures": {"a/b/y": {"count": 3}, "a/c/x": {"count": 2}}}}}
    assert field_report.unreproduced(field, triage) == {"e": [("a/c/x", 2)]}


def test_every_file_findings_links_exists(field_report):
    findings = (field_report.FIELD_DIR / "FINDINGS.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:reproducers|upstream|llama-server)/[^)]*)\)", findings)
    assert links and [link for link in links if not (field_report.FIELD_DIR / link).exists()] == []


def test_a_file_reading_is_one_signature_and_its_example_keeps_its_property(field_report):
    """An added-token flag read otherwise shows in decode and id_to_token alike: one signature,
    whose example still replays as the property it was recorded in."""
    reading = "tokenizer/tokenizer.json/reads every added token's special as true"
    records = [{**record(reading, "a<x>", "a"), "property": "decode"},
               {**record(reading, ["<x>"], ["x"]), "property": "vocab", "minimized_input": {"ids": [1, 2]}}]
    groups = field_report.group_signatures(records, {})
    assert list(groups) == [reading] and groups[reading]["count"] == 2
    (example,) = field_report.example_records({"signatures": groups})
    assert example["signature"] == reading and example["property"] == "decode"


def test_parts_whose_links_are_lists_are_carried_whole(field_report):
    """A carried verdict's links may be lists (_links); carrying it again must not need them hashable."""
    old = {"e | a/b/one": {"verdict": "engine bug", "note": "n1", "reproducer": ["reproducers/1.py", "reproducers/2.py"]},
           "e | a/b/two": {"verdict": "policy", "note": "n2"}}
    field = {"engines": {"e": {"signatures": {"a/b/both": {"formerly": ["a/b/one", "a/b/two", "a/b/one"]}}}}}
    carried = field_report.carried_triage(old, field)["e | a/b/both"]
    assert carried["reproducer"] == ["reproducers/1.py", "reproducers/2.py"]
    assert carried["note"] == "triaged apart before the shape grouping: engine bug: n1 / policy: n2"


LLAMA_SERVER_SPLITS = ROOT / "tests" / "data" / "llama_server_llama2_splits.json"


@NEEDS_MODELS
def test_signatures_one_catalogue_class_reproduces_are_one_root_cause(field_report):
    """llama-server's ids on llama2 (one converter bug: every token the same placeholder score)
    split seven ways by the shape of the difference; the mutant merging the leftmost pair joining
    into a token, ranks ignored, reproduces each recorded example exactly, so they are one."""
    recorded = json.loads(LLAMA_SERVER_SPLITS.read_text(encoding="utf-8"))["signatures"]
    assert len(recorded) == 7
    signatures = field_report.explained_signatures(copy.deepcopy(recorded), {"llama2": str(SHARED["llama2"])})
    assert list(signatures) == ["tokenizer/encode/explained by tokenizer_merge_ranks_ignored"]
    (merged,) = signatures.values()
    assert merged["count"] == sum(group["count"] for group in recorded.values())
    assert set(recorded) <= set(merged["formerly"])
    assert merged["example"]["input"]["text"] in {group["example"]["input"]["text"] for group in recorded.values()}


def test_an_explained_signature_alone_keeps_its_name_and_an_unexplained_one_is_left_as_it_is(field_report):
    qwen = str(build_family("qwen"))
    decomposed = {"text": "e\u0301", "add_special_tokens": False}  # NFC makes it U+00E9

    def group(given: dict, actual: list[int]) -> dict:
        return {"count": 1, "families": ["qwen"], "formerly": [], "example": {
            "size": 1, "family": "qwen", "property": "encode", "input": given, "expected": None, "actual": actual}}

    without_nfc = Implementation("textbound.mutants.tokenizer_nfc_skipped").Tokenizer.from_dir(qwen).encode("e\u0301", False)
    signatures = {"tokenizer/encode/ids: a": group(decomposed, without_nfc),
                  "tokenizer/encode/ids: b": group(decomposed, [0, 0, 0, 0, 0])}
    explained = field_report.explained_signatures(signatures, {"qwen": qwen})
    assert list(explained) == ["tokenizer/encode/ids: a", "tokenizer/encode/ids: b"]
    assert "tokenizer_nfc_skipped" in explained["tokenizer/encode/ids: a"]["explained_by"]
    assert "explained_by" not in explained["tokenizer/encode/ids: b"]


def test_only_one_class_merges_and_only_within_a_format(field_report, monkeypatch):
    """Several classes reproducing an example say little of its cause, and an engine's tool parsers
    are one per format: neither merges signatures."""
    from textbound import mutants
    from textbound.triage import explanation

    def group(fmt: str | None, classes: str) -> dict:
        given = {"format": fmt, "classes": classes} if fmt else {"classes": classes}
        return {"count": 1, "families": ["qwen"], "formerly": [], "example": {
            "size": 1, "family": "qwen", "property": "stream", "input": given, "expected": None, "actual": None}}

    monkeypatch.setattr(explanation, "explaining_mutants", lambda record, folders: [
        mutants.BY_NAME[name] for name in record["minimized_input"]["classes"].split()])
    signatures = {"tools/stream/hermes: a": group("hermes", "tools_tag_split_leaks"),
                  "tools/stream/hermes: b": group("hermes", "tools_tag_split_leaks"),
                  "tools/stream/mistral: c": group("mistral", "tools_tag_split_leaks"),
                  "structured/sound/d": group(None, "structured_bounds_ignored structured_length_ignored"),
                  "structured/sound/e": group(None, "structured_bounds_ignored structured_length_ignored")}
    assert list(field_report.explained_signatures(signatures, {})) == [
        "structured/sound/d", "structured/sound/e", "tools/stream/hermes: explained by tools_tag_split_leaks",
        "tools/stream/mistral: c"]


@NEEDS_MODELS
def test_the_merge_ranks_reading_gives_llama_servers_ids_on_llama2():
    """The reading the tokenizer check names a merge-order divergence by, written apart from the
    mutant: on the oracle's own encoding, each example's text joined leftmost first is the ids
    llama-server returned."""
    import tokenizers

    from textbound.naming.counterfactuals import LeftmostJoin
    folder = SHARED["llama2"]
    model = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]
    reading = LeftmostJoin(tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")), model)
    examples = [group["example"] for group in
                json.loads(LLAMA_SERVER_SPLITS.read_text(encoding="utf-8"))["signatures"].values()]
    for example in examples:
        given = example["input"]
        assert reading.encode(given["text"], given["add_special_tokens"]).ids == example["actual"], given


def test_a_root_cause_regrouped_from_its_one_example_keeps_its_class_name(field_report, monkeypatch):
    """A report regrouped from its examples has one example per root cause: the name it had stays."""
    from textbound import mutants
    from textbound.triage import explanation
    monkeypatch.setattr(explanation, "explaining_mutants", lambda record, folders: [mutants.BY_NAME["stops_within_delta"]])
    named = "stops/stream/explained by stops_within_delta"
    signatures = {"stops/stream/missed a stop": {"count": 9, "families": ["gpt2"], "formerly": [named], "example": {
        "size": 1, "family": "gpt2", "property": "stream", "input": {}, "expected": None, "actual": None}}}
    assert list(field_report.explained_signatures(signatures, {})) == [named]
    assert signatures[named]["count"] == 9 and signatures[named]["formerly"] == ["stops/stream/missed a stop"]
