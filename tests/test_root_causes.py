"""A failing gate tells one story (issue 37): the signatures one bug gives are one root cause,
grouped by evidence (its smallest examples re-run with one implementation name at a time swapped
for the oracle's), never by their words; two independent bugs stay two; the baseline is keyed by
root cause; the smallest example shown is a minimized one, every field labelled, and a stream
reads as a timeline of its calls."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from textbound.checks import case_source, run_check
from textbound.cli import EXIT_DIVERGED, EXIT_OK, main
from textbound.families import build_family, embedded_family
from textbound.mutants import CATALOGUE
from textbound.naming.divergence import Case
from textbound.naming.root_causes import ANY_CLASS, ANY_PLACE, Evidence, class_free, root_causes
from textbound.naming.signatures import signature_groups
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation
from textbound.records.alignment import labelled_example
from textbound.records.report import Recorder, RunInfo, build_summary, ci_markdown, markdown_report
from textbound.run.evidence import Gatherer
from textbound.run.runner import Plan, run
from textbound.run.stand_ins import ReferenceStopChecker

UNFINISHED = "textbound.mutants.detokenizer_unfinished_released"
DETOKENIZER_SIGNATURE = "detokenizer/stream/shown a byte run otherwise than the whole decode"


def check(impl: str, report_dir: Path, *extra: str, components: str = "detokenizer,stops", family: str = "gpt2") -> int:
    return main(["check", "--impl", impl, "--family", family, "--component", components, "--budget", "quick",
                 "--jobs", "1", "--report-dir", str(report_dir), *extra])


def summary_of(report_dir: Path) -> dict:
    return json.loads((report_dir / "summary.json").read_text(encoding="utf-8"))


def causes_of(report_dir: Path) -> dict[str, list[str]]:
    return {c["name"]: [s["signature"] for s in c["signatures"]] for c in summary_of(report_dir)["root_causes"]}


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory) -> Path:
    """A detokenizer releasing an unfinished character as U+FFFD, checked with the stop checks that
    stream through it."""
    report_dir = tmp_path_factory.mktemp("unfinished")
    assert check(UNFINISHED, report_dir) == EXIT_DIVERGED
    return report_dir


def test_a_detokenizers_stops_pipeline_signatures_are_its_root_cause(unfinished):
    summary = summary_of(unfinished)
    pipeline = [s for s in summary["signatures"] if s.startswith("stops/pipeline/")]
    assert len(pipeline) >= 2 and DETOKENIZER_SIGNATURE in summary["signatures"]  # one bug, many signatures
    (cause,) = summary["root_causes"]
    assert cause["name"] == "detokenizer_unfinished_released" and cause["lead"] == DETOKENIZER_SIGNATURE
    assert cause["culprit"] == "IncrementalDetokenizer"
    assert {s["signature"] for s in cause["signatures"]} == set(summary["signatures"])
    assert cause["cases"] == sum(summary["signatures"].values())
    evidence = summary["root_cause_evidence"]
    assert all(evidence[s]["upstream"] == DETOKENIZER_SIGNATURE for s in pipeline)  # each linked by a re-run


def test_a_detokenizer_bug_the_catalogue_lacks_is_one_root_cause_too(tmp_path):
    """Grouping does not lean on a mutant reproducing the example: a detokenizer stripping each
    delta's leading spaces is named by its own shape, its stops/pipeline signatures under it."""
    assert check("tests.one_bug.deltas_lstripped", tmp_path) == EXIT_DIVERGED
    summary = summary_of(tmp_path)
    assert len(summary["signatures"]) > 2
    (cause,) = summary["root_causes"]
    assert cause["name"] == "detokenizer/stream/shown text the whole decode changes: drops ' '"
    assert cause["explained_by"] == [] and cause["culprit"] == "IncrementalDetokenizer"


def test_one_chat_bug_in_render_ids_and_sanitized_ids_is_one_root_cause(tmp_path):
    """A server rendering without the BOS and giving no rendered text for a tokenized request: its
    render and its prompts' ids (sanitized or not) diverge, each property with signatures of its own."""
    family = embedded_family("llama3")

    def first_cases(family, component, budget, seed):
        cases = (c for c in case_source(family, component, budget, seed) if c.input["template"] == "family")
        per_property = Counter()
        for case in cases:
            per_property[case.property] += 1
            if per_property[case.property] <= 8:
                yield case

    impl = Implementation("tests.one_bug.chat_engine_bos_empty")
    recorder = Recorder(tmp_path, RunInfo(impl.name, "1", {}, 0, "quick", {family.name: str(family.path)}))
    verdict = run(Plan(impl, [family], ["chat"], BUDGETS["quick"]), recorder, case_source=first_cases)
    assert {signature.split("/")[1] for signature in verdict.new} == {"render", "ids", "sanitized_ids"}
    (name, signatures), = causes_of(tmp_path).items()
    assert name == "chat/render/renders without the variable bos_token"
    assert set(signatures) == {r["signature"] for r in recorder.records}


@pytest.mark.parametrize(("impl", "components", "names"), [
    ("tests.two_bugs.detokenizer_and_stops", "detokenizer,stops", {"detokenizer_unfinished_released", "stops_within_delta"}),
    ("tests.two_bugs.in_the_detokenizer", "detokenizer,stops",
     {"detokenizer_unfinished_released", "detokenizer_skip_special_ignored"}),
    ("tests.two_bugs.in_the_decode", "tokenizer",
     {"tokenizer/decode/text: drops ' ' at the start", "tokenizer_trailing_whitespace_collapsed"}),
])
def test_two_independent_bugs_stay_two_root_causes(impl, components, names, tmp_path):
    check(impl, tmp_path, components=components)
    causes = causes_of(tmp_path)
    assert set(causes) == names, causes
    signatures = [s for listed in causes.values() for s in listed]
    assert len(signatures) == len(set(signatures)) == len(summary_of(tmp_path)["signatures"])


def test_signatures_are_grouped_only_by_evidence():
    records = [{"signature": signature, "family": "gpt2", "minimized_input": {"ids": [n]}}
               for n, signature in enumerate(["stops/pipeline/output: replaces symbols by U+FFFD",
                                              "stops/pipeline/output: replaces non-ASCII letters by U+FFFD",
                                              "stops/pipeline/output: drops ' ' at the start",
                                              "tokenizer/decode/text: drops ' ' at the start"])]
    symbols, letters, spaces, decode = (r["signature"] for r in records)
    assert len(root_causes(records)) == 4  # without evidence, as recorded
    # One culprit, one shape over two character classes: one root cause, named by the shape.
    same = {s: Evidence("IncrementalDetokenizer") for s in (symbols, letters, spaces)}
    by_shape = {c.name: c.signatures for c in root_causes(records, same)}
    assert by_shape[class_free(symbols)] == sorted([symbols, letters]) and ANY_CLASS in class_free(symbols)
    assert by_shape[spaces] == [spaces] and by_shape[decode] == [decode]  # another shape is another bug
    # ... unless two catalogue classes reproduce them apart.
    parted = {**same, symbols: Evidence("IncrementalDetokenizer", mutants={"a": "bug a"}),
              letters: Evidence("IncrementalDetokenizer", mutants={"b": "bug b"})}
    assert sorted(c.name for c in root_causes(records, parted)) == sorted(["a", "b", decode, spaces])
    # An upstream signature leads its followers, named by it even when the run lacks it.
    upstream = {spaces: Evidence("Tokenizer.decode", upstream=decode),
                symbols: Evidence("IncrementalDetokenizer", upstream="detokenizer/stream/x")}
    led = {c.name: (c.lead, c.signatures) for c in root_causes(records, upstream)}
    assert led[decode] == (decode, [spaces, decode]) and led["detokenizer/stream/x"] == ("detokenizer/stream/x", [symbols])


def test_one_culprits_shape_at_several_places_or_beside_a_class_is_one_root_cause():
    records = [{"signature": signature, "family": "bert", "minimized_input": {"ids": [n]}}
               for n, signature in enumerate(["tokenizer/decode/text: drops ' ' before punctuation",
                                              "tokenizer/decode/text: drops ' ' inside the text",
                                              "tokenizer/decode/text: drops ASCII letters inside the text",
                                              "stops/stream/output: replaces '\\n' by ' '",
                                              "stops/stream/output: replaces '\\n' by ' ' and ASCII letters"])]
    punctuation, inside, letters, newline, beside = (r["signature"] for r in records)
    decode = {s: Evidence("Tokenizer.decode") for s in (punctuation, inside, letters)}
    stops = {s: Evidence("StopChecker") for s in (newline, beside)}
    causes = {c.name: c.signatures for c in root_causes(records, {**decode, **stops})}
    assert causes == {f"tokenizer/decode/text: drops ' ' {ANY_PLACE}": sorted([punctuation, inside]),
                      letters: [letters],  # dropping letters is another shape
                      newline: sorted([newline, beside])}
    assert len(root_causes(records, {**decode, inside: Evidence("IncrementalDetokenizer"), **stops})) == 4
    parted = {**decode, punctuation: Evidence("Tokenizer.decode", mutants={"a": "bug a"}),
              inside: Evidence("Tokenizer.decode", mutants={"b": "bug b"})}
    assert len(root_causes(records, {**parted, **stops})) == 4


def test_text_replaced_by_u_fffd_is_one_shape_and_an_upstream_signature_joins_by_shape_too():
    """A decode joining each id's own decode: characters split over byte tokens come out as U+FFFD,
    with whatever context the difference widens over; a detokenizer example follows a decode
    signature the run itself lacks, which meets the run's decode signatures by its shape."""
    joined, widened, absent, stream = ("tokenizer/decode/text: replaces symbols by U+FFFD",
                                       "tokenizer/decode/text: replaces ' ' and marks by ' ' and U+FFFD",
                                       "tokenizer/decode/text: replaces U+FFFD and marks by U+FFFD",
                                       "detokenizer/stream/stream decodes each piece without the text before it")
    records = [{"signature": s, "family": "gpt2", "minimized_input": {}} for s in (joined, widened, stream)]
    evidence = {joined: Evidence("Tokenizer.decode"), widened: Evidence("Tokenizer.decode"),
                absent: Evidence("Tokenizer.decode"), stream: Evidence("Tokenizer.decode", upstream=absent)}
    (cause,) = root_causes(records, evidence)
    assert cause.name == f"tokenizer/decode/text: replaces {ANY_CLASS} by U+FFFD"
    assert sorted(cause.signatures) == sorted([joined, widened, stream])
    assert len(root_causes(records, {**evidence, absent: Evidence()})) == 2  # the upstream's culprit unknown


def test_a_mutant_reproducing_one_followers_example_does_not_name_the_cause():
    """A detokenizer counting shown text in UTF-8 bytes loses text after a prompt's unfinished
    character too, which the catalogue's detokenizer_prompt_ignored reproduces on that one example."""
    lead, prompt = ("detokenizer/stream/shown a byte run otherwise than the whole decode",
                    "detokenizer/stream/stream decodes the ids without the prompt")
    records = [{"signature": s, "family": "gpt2", "minimized_input": {}} for s in (lead, prompt, lead)]
    ignored = {"detokenizer_prompt_ignored": "the prompt ignored"}
    evidence = {lead: Evidence("IncrementalDetokenizer", neighbours=(prompt,)),
                prompt: Evidence("IncrementalDetokenizer", mutants=ignored)}
    (cause,) = root_causes(records, evidence)
    assert (cause.name, cause.mutants) == (lead, {})
    evidence[lead] = Evidence("IncrementalDetokenizer", neighbours=(prompt,), mutants=ignored)
    assert [c.name for c in root_causes(records, evidence)] == ["detokenizer_prompt_ignored"]


def test_a_signature_its_example_gives_with_one_element_left_out_is_its_root_cause():
    """A line-ending bug: "\\r\\n" read as "\\n" drops the "\\r"; the same input less its "\\n" shows
    the "\\r" read as "\\n", the oracle's encode swapped in agreeing on both."""
    gatherer = Gatherer(Implementation("tests.one_bug.encode_line_endings_normalized"), {"gpt2": str(build_family("gpt2"))})
    subject = gatherer.subject("gpt2")
    found = run_check(subject, Case("tokenizer", "encode", "gpt2", {"text": "\r\n*", "add_special_tokens": False}))
    replaced = "tokenizer/encode/ids: replaces '\\r' by '\\n'"
    assert found.signature == "tokenizer/encode/ids: drops '\\r' at the start"
    assert gatherer.neighbours(subject, found, "Tokenizer.encode") == (  # less its "\\n", less its "*"
        replaced, "tokenizer/encode/ids: drops whitespace at the end")
    assert gatherer.neighbours(subject, found, None) == ()  # no culprit, no evidence
    records = [{"signature": s, "family": "gpt2", "minimized_input": {}} for s in (found.signature, replaced)]
    assert len(root_causes(records, {found.signature: Evidence("Tokenizer.encode", neighbours=(replaced,))})) == 1
    assert Evidence.from_json(Evidence(neighbours=(replaced,)).to_json()).neighbours == (replaced,)


def test_a_streams_prompt_is_streamed_as_its_first_ids_next_to_it():
    """A detokenizer counting shown text in UTF-8 bytes: a prompt ending in half a character (its
    U+FFFD counted as shown) loses the bytes after it, as if the prompt were ignored; the prompt
    streamed as the first ids shows the same bug."""
    gatherer = Gatherer(Implementation("tests.one_bug.detokenizer_counts_utf8_bytes"), {"gpt2": str(build_family("gpt2"))})
    subject = gatherer.subject("gpt2")
    found = run_check(subject, Case("detokenizer", "stream", "gpt2", {"ids": [81], "splits": [], "prompt_ids": [102],
                                                                      "skip_special_tokens": False}))
    assert found.signature == "detokenizer/stream/stream decodes the ids without the prompt"
    assert gatherer.neighbours(subject, found, "IncrementalDetokenizer") == (DETOKENIZER_SIGNATURE,)


def test_a_mutant_giving_the_examples_answer_by_coincidence_does_not_explain_it():
    """A stop checker matching stops in any case holds back a character the reference releases
    after one delta of this text; the catalogue's fixed hold (the longest stop's length, less one)
    gives that answer too, but not on the texts next to it."""
    from textbound.run.evidence import divergence_record, explaining_mutants

    families = {"metaspace": str(build_family("metaspace"))}
    gatherer = Gatherer(Implementation("tests.one_bug.stops_case_insensitive"), families)
    case = Case("stops", "stream", "metaspace", {
        "text": "<pad><extra_id_0> \nck().<unk>\u1209<extra_id_0>\u30ad</s>EP + 1))", "stops": ["r:", "User:"],
        "splits": [1, 3, 4, 5, 5, 5, 6, 8, 16, 17, 18, 18, 20, 20, 22, 26, 28, 28, 41, 41, 44, 46, 48, 54, 54],
        "include_stop": False})
    record = divergence_record(run_check(gatherer.subject("metaspace"), case))
    assert record["signature"] == "stops/stream/holds back more than may begin a stop"
    assert [m.name for m in explaining_mutants(record, families, None, gatherer)] == ["stops_fixed_holdback"]
    assert gatherer.evidence(record)[record["signature"]].mutants == {}


def test_a_mutant_is_tried_next_to_the_example_with_each_stop_string_left_out():
    """The minimized hold: "N" held as the start of "never occurs" by a checker ignoring case, and
    by the catalogue's fixed hold (13 characters) alike; without that stop they part."""
    gatherer = Gatherer(Implementation("tests.one_bug.stops_case_insensitive"), {"metaspace": str(build_family("metaspace"))})
    case = Case("stops", "stream", "metaspace", {"text": "N", "stops": ["never occurs \x00", "\n{"], "splits": [],
                                                 "include_stop": True})
    found = run_check(gatherer.subject("metaspace"), case)
    assert found.signature == "stops/stream/holds back more than may begin a stop"
    (mutant,) = (m for m in CATALOGUE if m.name == "stops_fixed_holdback")
    assert not gatherer.agrees_nearby(gatherer.subject("metaspace"), mutant, found)


def test_a_tokenizer_method_is_swapped_behind_the_contract():
    """The checks reach the tokenizer through its contract (a stand-in with slots, which a shallow
    copy cannot take): the oracle's encode swapped in behind it still names the culprit."""
    gatherer = Gatherer(Implementation("tests.one_bug.encode_line_endings_normalized"), {"gpt2": str(build_family("gpt2"))})
    case = Case("tokenizer", "encode", "gpt2", {"text": "\r]", "add_special_tokens": False})
    assert gatherer.culprit(gatherer.subject("gpt2"), case) == "Tokenizer.encode"


def test_the_baseline_is_keyed_by_root_cause(unfinished, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "--from", str(unfinished), "--reason", "vllm#1", "--out", str(baseline)]) == EXIT_OK
    (entry,) = json.loads(baseline.read_text())["entries"]
    assert entry["root_cause"] == "detokenizer_unfinished_released" and entry["families"] == ["gpt2"]
    assert set(entry["signatures"]) == set(summary_of(unfinished)["signatures"])
    # An entry naming the root cause covers the signatures a run groups under it, listed or not;
    # one listing a signature alone, as baselines did, still reads and covers that signature alone.
    by_cause = tmp_path / "by_cause.json"
    by_cause.write_text(json.dumps({"entries": [{**entry, "signatures": [DETOKENIZER_SIGNATURE]}]}))
    assert check(UNFINISHED, tmp_path / "known", "--baseline", str(by_cause)) == EXIT_OK
    by_signature = tmp_path / "by_signature.json"
    by_signature.write_text(json.dumps({"entries": [{"signature": DETOKENIZER_SIGNATURE, "family": "*",
                                                     "reason": "vllm#1"}]}))
    assert check(UNFINISHED, tmp_path / "partly", "--baseline", str(by_signature)) == EXIT_DIVERGED
    assert summary_of(tmp_path / "partly")["known"] == [DETOKENIZER_SIGNATURE]
    capsys.readouterr()


def test_the_smallest_example_is_a_minimized_one():
    found = {"minimization": "not minimized: 3 of this signature minimized in its chunk already"}
    where = {"signature": "tokenizer/encode/x", "component": "tokenizer", "property": "encode", "family": "gpt2"}
    records = [{**where, "minimized_input": {"text": "a"}, "first_difference": found, "expected": [1], "actual": [2],
                "reproduce": "replay a"},
               {**where, "minimized_input": {"text": "abc"}, "first_difference": {}, "expected": [1], "actual": [3],
                "reproduce": "replay abc"}]
    assert signature_groups(records)[0].smallest["reproduce"] == "replay abc"
    (cause,) = root_causes(records)
    assert cause.smallest["reproduce"] == "replay abc"
    header = {"impl": "impl", "impl_version": "1", "oracles": {}, "seed": 0, "budget": "quick", "families": {}}
    summary = build_summary(header, Counter(), records, {"new": ["tokenizer/encode/x"]}, [], {})
    report = markdown_report(summary, records)
    assert 'text:     "abc"' in report and 'text:     "a"\n' not in report
    assert "## Found, not minimized" in report and "- tokenizer/encode/x on gpt2: 1" in report
    assert "## Not checked" not in report
    assert '{"text": "abc"}' in ci_markdown(summary, records)


def test_every_field_of_an_example_is_labelled():
    record = {"minimized_input": {"ids": [136, 223], "stops": ["\u0301"], "include_stop": False},
              "expected": {"output": "", "stopped": True, "stop_string": "\u0301"},
              "actual": {"output": "\ufffd", "stopped": False, "stop_string": None},
              "first_difference": {"after": "add 1", "seen": ["x"]}}
    lines = labelled_example(record)
    assert "ids:          [136, 223]" in lines  # ids in one row
    assert "stopped:      expected True, actual False" in lines
    assert "stop_string:  expected '\u0301', actual None" in lines
    assert "  after:      'add 1'" in lines


def test_a_streamed_divergence_reads_as_a_timeline(unfinished):
    report = (unfinished / "report.md").read_text(encoding="utf-8")
    lines = report.splitlines()
    start = lines.index("   timeline, call by call (>> the first call where the two sides part):")
    assert lines[start + 1].split() == ["call", "ids", "bytes", "impl", "released", "|", "reference", "shows"]
    first = next(line for line in lines[start:] if line.startswith(">> "))
    assert first.split()[:5] == [">>", "add", "0", "[127]", "c3"] and first.endswith('"\ufffd"           | ""')
    assert '"é"' in lines[lines.index(first) + 1]  # the reference shows the character once its bytes are in
    page = (unfinished / "report.html").read_text(encoding="utf-8")
    assert '<table class="timeline">' in page and '<tr class="first"><td>add 0</td><td>[127]</td><td>c3</td>' in page
    assert "## Found, not minimized" in report and "recorded as found" not in report.split("## Not checked")[-1]


def test_the_reference_stop_checker_streams_as_the_whole_text_reference():
    checker = ReferenceStopChecker(["</s>", "ab"])
    assert [checker.add("xa"), checker.add("</"), checker.add("s> more")] == ["x", "a", ""]
    assert checker.stopped and checker.stop_string == "</s>" and checker.finish() == ""


def test_triage_leads_with_the_root_causes(unfinished, capsys):
    assert main(["triage", str(unfinished)]) == EXIT_OK
    out = capsys.readouterr().out
    count = len(summary_of(unfinished)["signatures"])
    assert f"{count} signature(s) in 1 root cause(s)" in out
    assert out.split("\n\n")[1].startswith("1. detokenizer_unfinished_released   NEW\n"
                                           "   explained by detokenizer_unfinished_released (an unfinished character "
                                           "released as U+FFFD)\n")
    assert "\n2. " not in out and "\n>> add 0 " in out


def test_a_report_written_before_root_causes_is_regrouped_by_triage(unfinished, tmp_path, capsys):
    old = tmp_path / "old"
    old.mkdir()
    summary = summary_of(unfinished)
    for name in ("root_causes", "root_cause_evidence"):
        summary.pop(name)
    (old / "summary.json").write_text(json.dumps(summary))
    (old / "divergences.jsonl").write_text((unfinished / "divergences.jsonl").read_text())
    assert main(["triage", str(old)]) == EXIT_OK
    assert " in 1 root cause(s)" in capsys.readouterr().out
    assert main(["triage", "--no-explain", str(old)]) == EXIT_OK
    assert f" in {len(summary['signatures'])} root cause(s)" in capsys.readouterr().out


def test_a_sharded_run_is_grouped_by_every_shards_evidence(tmp_path, capsys):
    shards = [tmp_path / f"shard{k}" for k in (1, 2)]
    for k, shard in enumerate(shards, 1):
        check(UNFINISHED, shard, "--shard", f"{k}/2")
    main(["merge", str(tmp_path / "all"), *map(str, shards)])
    capsys.readouterr()
    assert list(causes_of(tmp_path / "all")) == ["detokenizer_unfinished_released"]


def test_a_root_cause_entry_that_lacks_its_signatures_is_named_as_such(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"entries": [{"root_cause": "x", "reason": "known"}]}))
    assert check(UNFINISHED, tmp_path / "r", "--baseline", str(baseline)) == 2
    assert "entries[0]: a root-cause entry needs a non-empty 'root_cause', 'signatures'" in capsys.readouterr().err
