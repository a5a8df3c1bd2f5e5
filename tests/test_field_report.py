"""tools/field_report.py: a field report's signatures are re-derived from its records under today's
kinds, triage verdicts follow the divergences to their new signatures, and a server engine's
per-family reports make one row. The committed site (an index, a page per engine, matrix.html) is
what field.json and triage.json render, every link in it resolves, and matrix.html, drawn by a real
browser (Debian's chromium), colours each cell as its signatures' triage says."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from textbound.families import build_family
from textbound.plan.implementation import Implementation
from textbound.triage.causes import rekinded

from .families import NEEDS_MODELS, SHARED
from .test_html_report import CHROMIUM, FLAGS
from .test_html_report import pytestmark as NEEDS_CHROMIUM

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


def test_a_server_engines_refused_families_are_its_not_applicable_ones(field_report, tmp_path):
    engine = field_report.Engine("srv", "textbound.adapters.server", ("chat",), False, families=("qwen",), server=True,
                                 refuses=(("gpt2", "no chat template"),))
    setup = field_report.run_engine(engine, [], tmp_path, "quick", 1)
    assert setup == {"missing": None, "not_applicable": {"gpt2": "no chat template"}}
    page = field_report.site({"budget": "quick", "engines": {"srv": {**setup, "module": engine.module,
                              "components": ["chat"], "version": None, "counts": [], "signatures": {}}}}, {})
    assert "- gpt2: no chat template" in page["engines/srv.md"]


def test_an_engines_case_timeout_reaches_its_check_and_the_default_is_left_alone(field_report, tmp_path, monkeypatch):
    commands = []
    monkeypatch.setattr(field_report.subprocess, "run", lambda command, **_: commands.append(command))
    gpt2 = field_report.FieldFamily("gpt2", build_family("gpt2"), ("--family", "gpt2"))
    for timeout in (600.0, None):
        engine = field_report.Engine("impl", "impl", ("tokenizer",), False, case_timeout=timeout)
        field_report.run_engine(engine, [gpt2], tmp_path, "quick", 1)
    slow, default = commands
    assert slow[slow.index("--case-timeout") + 1] == "600.0"
    assert "--case-timeout" not in default


def test_an_engine_not_run_here_is_a_row_saying_why_and_its_module_is_never_imported(field_report, tmp_path):
    engine = field_report.Engine("gone", "no_such_module_anywhere", ("chat",), False,
                                 unavailable="`pip install gone` printed: no matching distribution")
    setup = field_report.run_engine(engine, [], tmp_path, "quick", 1)
    assert setup == {"missing": "`pip install gone` printed: no matching distribution", "not_applicable": {}}
    entry = field_report.collect(engine, tmp_path, setup, {})
    assert entry["version"] is None and entry["missing"] == setup["missing"] and not entry["signatures"]


def test_every_reproducer_and_report_the_triage_links_exists(field_report):
    triage = json.loads(field_report.TRIAGE_FILE.read_text(encoding="utf-8"))
    assert field_report.dangling_links(triage) == {}
    assert any(field_report.linked_paths(entry, "reproducer") for entry in triage.values())


def test_every_reproducer_has_a_row_in_the_reproducers_index(field_report):
    """reports/field/reproducers/README.md is where a maintainer finds what each script needs to run."""
    folder = field_report.FIELD_DIR / "reproducers"
    index = (folder / "README.md").read_text(encoding="utf-8")
    scripts = [path.name for path in folder.iterdir() if path.suffix in (".py", ".mjs")]
    assert scripts and [name for name in scripts if f"| `{name}` |" not in index] == []


# The serving engines whose engine-bug verdicts were audited against their sources: each names the
# source file it read (a path with its extension), so that a maintainer can check the reading.
AUDITED_ENGINES = ("vllm", "vllm-parsers", "sglang", "llama-server",
                   # issue 39's engines: each verdict read in the engine's source
                   "mlx-lm", "mlx-lm-server", "mlx-lm-http", "llama-cpp-python-chat", "llama-cpp-python-server",
                   "dynamo", "smg", "mistral.rs", "transformers-serve", "xgrammar", "litellm")
SOURCE_FILE = re.compile(r"[\w/.-]+\.(?:py|cpp|cc|h|hpp|c|rs|mjs|js)\b")


def test_every_engine_bug_of_the_audited_serving_engines_names_the_source_file_read(field_report):
    triage = json.loads(field_report.TRIAGE_FILE.read_text(encoding="utf-8"))
    bugs = {key: entry["note"] for key, entry in triage.items()
            if entry["verdict"] == "engine bug" and key.split(" | ")[0] in AUDITED_ENGINES}
    assert len(bugs) > 20, "the audited rows are in the triage"
    assert [key for key, note in bugs.items() if not SOURCE_FILE.search(note)] == []


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
    links = re.findall(r"\]\(((?:reproducers|upstream|llama-server|engines)/[^)]*)\)", findings)
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


FIELD = ROOT / "reports" / "field"
INDEX_LINES = 300  # the index stays an index: the signatures are on the engine pages


@pytest.fixture(scope="module")
def committed(field_report):
    """field.json and triage.json as committed, and the site they render."""
    field = json.loads((FIELD / "field.json").read_text(encoding="utf-8"))
    triage = json.loads((FIELD / "triage.json").read_text(encoding="utf-8"))
    return field, triage, field_report.site(field, triage)


class MatrixCells(HTMLParser):
    """The cells of matrix.html's table: each ``td`` with a finding, its attributes and the link in it."""

    def __init__(self):
        super().__init__()
        self.cells: list[dict] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td" and "data-engine" in attrs:
            self.cells.append({**attrs, "href": None})
            self._in_cell = True
        elif tag == "a" and self._in_cell:
            self.cells[-1]["href"] = attrs["href"]

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_cell = False


def parsed_cells(text: str) -> list[dict]:
    parser = MatrixCells()
    parser.feed(text)
    return parser.cells


def unresolved(page: Path, target: str) -> str | None:
    """Why ``target``, a link on ``page`` (a path under FIELD, a fragment or both), does not resolve."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None  # the web: not checked here
    path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    if not path.exists():
        return f"{target}: no {path}"
    if parts.fragment and f'id="{parts.fragment}"' not in path.read_text(encoding="utf-8"):
        return f"{target}: no id {parts.fragment!r} in {path.name}"
    return None


def site_links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return re.findall(r'href="([^"]+)"', text) if page.suffix == ".html" else re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_committed_site_is_what_field_json_and_the_triage_render(committed):
    """Regenerating (tools/field_report.py --write-only) gives the same bytes, and no page is left over."""
    _, _, files = committed
    written = {str(path.relative_to(FIELD)) for path in (FIELD / "engines").glob("*")} | {"README.md", "matrix.html"}
    assert written == set(files)
    stale = [path for path, text in files.items() if (FIELD / path).read_bytes() != text.encode("utf-8")]
    assert stale == [], "run python tools/field_report.py --write-only"


def test_the_index_is_short_and_links_every_engine_to_its_page(committed):
    field, _, _ = committed
    lines = (FIELD / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < INDEX_LINES
    for name in field["engines"]:
        rows = [line for line in lines if line.startswith(f"| [{name}](")]
        assert rows, name
        for row in rows:
            page = re.match(r"\| \[[^]]+\]\(([^)]+)\)", row).group(1)
            assert (FIELD / page).is_file() and (FIELD / page).read_text(encoding="utf-8").startswith(f"# {name}\n")


def test_every_link_of_the_site_resolves(committed):
    _, _, files = committed
    broken = [why for path in files for target in site_links(FIELD / path) if (why := unresolved(FIELD / path, target))]
    assert broken == []


def test_every_matrix_cell_links_to_its_component_on_its_engines_page(field_report, committed):
    field, _, _ = committed
    cells = parsed_cells((FIELD / "matrix.html").read_text(encoding="utf-8"))
    assert {(c["data-engine"], c["data-component"]) for c in cells} == {
        (name, component) for name in field["engines"] for component in field_report.field_components(field)}
    for found in cells:
        if found["data-finding"] == field_report.NOT_CHECKED:
            assert found["href"] is None
            continue
        assert found["href"] == f"engines/{found['data-engine']}.md#{found['data-component']}"
        assert unresolved(FIELD / "matrix.html", found["href"]) is None


def test_every_signature_is_on_its_engines_page_with_its_example_and_triage(field_report, committed):
    """Nothing the single README had is lost: each signature keeps its count, example, replay and triage."""
    field, triage, _ = committed
    for name, entry in field["engines"].items():
        page = (FIELD / "engines" / f"{name}.md").read_text(encoding="utf-8")
        for signature, group in entry["signatures"].items():
            heading = f'### <a id="{field_report.signature_anchor(signature)}"></a>`{signature}`\n'
            assert page.count(heading) == 1, (name, signature)
            section = page.split(heading, 1)[1].split("\n### ", 1)[0]
            example = group["example"]
            assert section.startswith(f"\n{group['count']} divergences on {', '.join(group['families'])}. ")
            assert field_report.triage_line(triage, name, signature, "../") in section
            assert f"input:    {field_report._clip(example['input'])}\n" in section
            assert not example.get("reproduce") or f"```sh\n{example['reproduce']}\n```" in section
        assert set(entry["not_applicable"]) <= set(re.findall(r"^- ([^:\s]+): ", page, re.M))


def entry_of(counts: dict[str, tuple[int, int]], signatures: tuple[str, ...], **more) -> dict:
    return {"components": sorted(counts), "signatures": {s: {"count": 1} for s in signatures}, **more,
            "counts": [{"family": "f", "component": c, "cases": n, "divergences": d} for c, (n, d) in counts.items()]}


def test_a_components_finding_is_the_most_pressing_verdict_of_its_signatures(field_report):
    entry = entry_of({"tokenizer": (10, 3), "chat": (5, 0), "tools": (4, 2), "stops": (6, 1)},
                     ("tokenizer/encode/a", "tokenizer/decode/b", "stops/stream/c"))
    triage = {"e | tokenizer/encode/a": {"verdict": "policy", "note": "n"},
              "e | tokenizer/decode/*": {"verdict": "engine bug", "note": "m"}}

    def finding(component, given=entry, triaged=triage):
        return field_report.component_findings("e", given, component, triaged).finding

    assert [finding(c) for c in ("tokenizer", "chat", "stops", "structured")] == [
        "engine bug", "no divergence", "untriaged", "not checked"]
    assert finding("tokenizer", triaged={k: {**v, "verdict": "policy"} for k, v in triage.items()}) == "policy"
    assert finding("tools") == "untriaged"  # divergences whose records were not kept: nobody looked at them
    assert finding("chat", {**entry, "missing": "ImportError: x", "counts": []}) == "not run"
    found = field_report.component_findings("e", entry, "tokenizer", triage)
    assert found.numbers() == "3 / 10" and found.verdicts == {"tokenizer/encode/a": "policy",
                                                               "tokenizer/decode/b": "engine bug"}


def test_a_root_cause_is_one_per_report_and_keeps_the_links_named_for_it_alone(field_report, tmp_path, monkeypatch):
    monkeypatch.setattr(field_report, "FIELD_DIR", tmp_path)
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "one.md").write_text("# One bug\n\nbody\n")
    (tmp_path / "upstream" / "two.md").write_text("# Two bug\n")
    triage = {"e | a/b/x": {"verdict": "engine bug", "note": "n", "report": "upstream/one.md", "reproducer": "r1.py"},
              "e | a/b/y": {"verdict": "engine bug", "note": "n", "report": ["upstream/one.md", "upstream/two.md"],
                            "reproducer": ["r1.py", "r2.py"]},
              "f | a/b/*": {"verdict": "engine bug", "note": "Found by hand. More words."},
              "f | a/c/z": {"verdict": "policy", "note": "not a cause"},
              "g | a/b/v": {"verdict": "reference changed", "note": "n", "reproducer": "reproducers/r3.py"}}
    field = {"engines": {"e": {"signatures": {"a/b/x": {"count": 2}, "a/b/y": {"count": 3}}},
                         "f": {"signatures": {"a/b/w": {"count": 5}, "a/c/z": {"count": 7}}},
                         "g": {"signatures": {"a/b/v": {"count": 1}}}}}
    causes = field_report.root_causes(field, triage)
    assert [(c.name, c.verdict(), c.signatures) for c in causes] == [
        ("One bug", "engine bug", {"e": [("a/b/x", 2), ("a/b/y", 3)]}),
        ("Two bug", "engine bug", {"e": [("a/b/y", 3)]}),
        ("Found by hand", "engine bug", {"f": [("a/b/w", 5)]}),
        ("`r3.py`", "reference changed", {"g": [("a/b/v", 1)]})]
    assert causes[0].links() == {"report": "upstream/one.md", "reproducer": "r1.py"}
    assert causes[1].links() == {"report": "upstream/two.md", "reproducer": ["r1.py", "r2.py"]}  # named with one


def test_writing_the_site_removes_the_page_of_an_engine_gone_from_field_json(field_report, tmp_path, monkeypatch):
    monkeypatch.setattr(field_report, "FIELD_DIR", tmp_path)
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "gone.md").write_text("# gone\n")
    field = {"budget": "quick", "engines": {"e": {
        "module": "m", "version": "1", "oracles": {}, **entry_of({"tokenizer": (4, 0)}, ())}}}
    field_report.write_site(field, {})
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "README.md", "engines/e.md", "matrix.html"]
    assert 'data-finding="no divergence"' in (tmp_path / "matrix.html").read_text()


def rgb(colour: str) -> str:
    """``rgb("#ff0080") == "rgb(255, 0, 128)"``, as getComputedStyle gives a colour."""
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


@NEEDS_CHROMIUM
def test_the_matrix_drawn_by_chromium_colours_each_cell_as_its_triage_says(field_report, committed, tmp_path):
    """Each cell's expected finding is read here from field.json and triage.json: an engine bug
    among the component's signatures is red, a component with no divergence green, one the engine
    lacks blank; the colour is the one the browser computed for the cell."""
    field, triage, _ = committed
    rendered = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                               (FIELD / "matrix.html").as_uri()], capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    cells = parsed_cells(rendered.stdout)
    assert len(cells) == len(field["engines"]) * len(field_report.field_components(field))
    for found in cells:
        entry = field["engines"][found["data-engine"]]
        component = found["data-component"]
        verdicts = {(field_report.triage_entry(triage, found["data-engine"], s) or {"verdict": "untriaged"})["verdict"]
                    for s in entry["signatures"] if s.startswith(f"{component}/")}
        counts = [c for c in entry["counts"] if c["component"] == component]
        divergences = sum(c["divergences"] for c in counts)
        if component not in entry["components"]:
            expected = "not checked"
        elif entry.get("missing") or not counts:
            expected = "not run"  # an engine not run here (smg's row), or no family it applies to
        elif "engine bug" in verdicts:
            expected = "engine bug"
        elif not divergences:
            expected = "no divergence"
        else:
            expected = found["data-finding"]
            assert expected in verdicts | {"untriaged"}, found  # which is most pressing is tested above
        assert found["data-finding"] == expected, found
        assert found["data-shown-colour"] == rgb(field_report.FINDING_COLOURS[expected]), found
        assert found["href"] is None or unresolved(FIELD / "matrix.html", found["href"]) is None
    shown = {found["data-finding"] for found in cells}
    assert {"engine bug", "no divergence", "not checked", "policy"} <= shown  # the field has each today


@pytest.mark.parametrize("broken", ["field.json", "triage.json"])
def test_rendering_from_a_file_that_is_not_json_is_one_line_and_exit_2(field_report, tmp_path, monkeypatch, capsys,
                                                                      broken):
    monkeypatch.setattr(field_report, "FIELD_DIR", tmp_path)
    monkeypatch.setattr(field_report, "TRIAGE_FILE", tmp_path / "triage.json")
    monkeypatch.setattr(field_report, "field_families", lambda: [])
    (tmp_path / broken).write_text('{"engines": ')
    with pytest.raises(SystemExit) as exited:
        field_report.main(["--write-only", "--work-dir", str(tmp_path / "runs"), "--engines", "tokenizers"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"{tmp_path / broken}: not JSON "
                                                             "(Expecting value: line 1 column 13 (char 12))")
    assert not (tmp_path / "README.md").exists()
