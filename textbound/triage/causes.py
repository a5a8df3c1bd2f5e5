"""Triage of a run's report: root causes, each with its smallest example and both sides aligned,
and the difference between two runs.

``textbound triage REPORT_DIR`` prints, for each root cause (textbound.naming.root_causes: the
signatures one bug gives, grouped by the evidence the run gathered re-running their smallest
examples), what names it, how often and where it occurred, its signatures, the smallest example
with every field labelled, a stream as the timeline of its calls (else expected and actual aligned,
the first difference marked), and the command that replays it. A report written before runs
grouped their signatures is grouped here, re-running its examples the same way (``--no-explain``:
one root cause per signature, as recorded). Lists of ids are aligned token by token (id, piece,
bytes), texts character by character (character, code point, UTF-8 bytes); for the encode of "a1"
by a tokenizer dropping the token after a digit:

       expected                      | actual
       id  piece  bytes              | id  piece  bytes
       64  "a"    61                 | 64  "a"    61
    >> 16  "1"    31                 |

``textbound diff OLD NEW`` says which signatures are new, fixed and unchanged between two runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..naming.divergence import is_oracle_disagreement, kind_of
from ..naming.root_causes import root_causes, summary_root_causes
from ..naming.signatures import SignatureGroup, signature_groups, split_records
from ..records.alignment import ids_only, labelled_example, vocabulary
from ..records.report import example_sides, minimization_note
from ..records.run_folder import Run

REGROUPING_SECONDS = 300.0  # an example of a report written before root causes, re-run to group it


def report_root_causes(run: Run, explain: bool = True) -> tuple[list[dict], dict]:
    """A report's root causes (summary.json's entries) and the evidence they were grouped by: as
    the run wrote them; for a report written before runs grouped signatures, with ``explain``, its
    examples re-run now (textbound.run.evidence), else one per signature."""
    divergences = split_records(run.records)[0]
    summary = run.summary
    if "root_causes" in summary or not explain or not divergences:
        return summary_root_causes(summary, divergences), summary.get("root_cause_evidence") or {}
    from ..plan.implementation import LIBRARY, Implementation, ImplementationError
    from ..run.evidence import gather
    try:
        rerun = Implementation(summary.get("impl", "")).source == LIBRARY
    except ImplementationError:
        rerun = False  # an implementation no longer importable here: its signatures as recorded
    evidence = gather(summary["impl"], summary.get("families", {}), divergences, REGROUPING_SECONDS) if rerun else {}
    causes = [cause.summary_entry(summary.get("new", ())) for cause in root_causes(divergences, evidence)]
    return causes, {signature: found.to_json() for signature, found in evidence.items()}


def _signature_line(signature: str, new: bool) -> str:
    mark = "   NEW" if new else "   (oracle disagreement)" if is_oracle_disagreement(signature) else ""
    return signature + mark


def _cause_lines(number: int, cause: dict, families: dict[str, str], evidence: dict) -> list[str]:
    """A root cause: its name, what names it, where it occurred, its signatures, its smallest
    example and its replay command."""
    smallest = cause["smallest"]
    where = ", ".join(f"{f} ({n})" for f, n in cause["families"].items())
    named = [f"   explained by {e['mutant']} ({e['bug']})" for e in cause.get("explained_by", [])]
    if cause.get("culprit"):
        named.append(f"   comes from {cause['culprit']}: its oracle-backed stand-in makes the examples agree")
    return [f"{number}. {_signature_line(cause['name'], cause.get('new', False))}", *named,
            f"   {len(cause['signatures'])} signature(s), {cause['cases']} divergence(s): {where}",
            *(f"   - {_signature_line(s['signature'], s.get('new', False))} ({s['cases']})" for s in cause["signatures"]),
            f"   smallest ({smallest['family']}, {smallest['signature']}){minimization_note(smallest)}:",
            *_example_lines(smallest, families, evidence), f"   replay: {smallest['reproduce']}", ""]


def _example_lines(smallest: dict, families: dict[str, str], evidence: dict) -> list[str]:
    return [*(f"   {line}" if line else "" for line in labelled_example(smallest)),
            *example_sides(smallest, families, evidence)]


def triage_text(run: Run, explain: bool = True) -> str:
    """The triage of a run, its root causes first:

        1. stops_within_delta   NEW
           explained by stops_within_delta (a stop string split across deltas missed)
           comes from StopChecker: its oracle-backed stand-in makes the examples agree
           2 signature(s), 114 divergence(s): gpt2 (114)
           - stops/stream/releases text that may begin a stop   NEW (93)
           - stops/pipeline/releases text that may begin a stop   NEW (21)
           smallest (gpt2, stops/stream/releases text that may begin a stop): ...
    """
    summary = run.summary
    divergences, disagreements = split_records(run.records)
    families = summary.get("families", {})
    causes, evidence = report_root_causes(run, explain)
    state = "completed" if run.completed else f"INTERRUPTED ({run.interrupted})"
    signatures = len({r["signature"] for r in divergences})
    lines = [f"{run.dir}: impl {summary.get('impl', '?')}, {signatures} signature(s) in {len(causes)} root cause(s), "
             f"{len(divergences)} divergence(s), {len(disagreements)} oracle disagreement(s); run {state}", ""]
    for number, cause in enumerate(causes, 1):
        lines += _cause_lines(number, cause, families, evidence)
    for number, group in enumerate(signature_groups(disagreements), len(causes) + 1):
        lines += _disagreement_lines(number, group, families)
    if not causes:
        lines.append("No divergence: every checked case agreed with the oracle.")
    return "\n".join(lines) + "\n"


def _disagreement_lines(number: int, group: SignatureGroup, families: dict[str, str]) -> list[str]:
    smallest = group.smallest
    where = ", ".join(f"{f} ({n})" for f, n in group.families.most_common())
    return [f"{number}. {_signature_line(group.signature, False)}", f"   {len(group.records)} case(s): {where}",
            f"   smallest ({smallest['family']}):", *_example_lines(smallest, families, {}),
            f"   replay: {smallest['reproduce']}", ""]


@dataclass
class RunDiff:
    new: list[str]
    fixed: list[str]
    unchanged: list[str]
    not_checked: list[str]  # only in OLD, but NEW did not check where they occurred


def diff_runs(old: Run, new: Run) -> RunDiff:
    """impl's signatures new in NEW, gone from NEW (fixed, where NEW checked the same family ×
    component), and in both; oracle disagreements are not impl's and not compared."""
    old_groups = {g.signature: g for g in signature_groups(split_records(old.records)[0])}
    new_groups = {g.signature: g for g in signature_groups(split_records(new.records)[0])}
    checked = new.checked
    fixed, not_checked = [], []
    for signature in sorted(old_groups.keys() - new_groups.keys()):
        component = signature.split("/", 1)[0]
        rechecked = checked is None or any((f, component) in checked for f in old_groups[signature].families)
        (fixed if rechecked else not_checked).append(signature)
    return RunDiff(sorted(new_groups.keys() - old_groups.keys()), fixed,
                   sorted(new_groups.keys() & old_groups.keys()), not_checked)


def diff_text(old: Run, new: Run) -> tuple[str, RunDiff]:
    result = diff_runs(old, new)

    def count(run: Run, signature: str) -> int:
        return sum(r["signature"] == signature for r in run.records)

    lines = [f"{old.dir} -> {new.dir}"]
    lines += [f"{name} is incomplete ({run.interrupted}): what it did not check is not compared"
              for name, run in (("OLD", old), ("NEW", new)) if not run.completed]
    for title, mark, signatures, show in (
            ("new", "+", result.new, lambda s: f"{count(new, s)}"),
            ("fixed", "-", result.fixed, lambda s: f"was {count(old, s)}"),
            ("not checked in NEW", "?", result.not_checked, lambda s: f"was {count(old, s)}"),
            ("unchanged", "=", result.unchanged, lambda s: f"{count(old, s)} -> {count(new, s)}")):
        lines.append(f"{title}: {len(signatures)}")
        lines += [f"  {mark} {s} ({show(s)})" for s in signatures]
    return "\n".join(lines) + "\n", result


# -- rekinding: a record written under an older wording of kinds -----------------------------------

OLD_TEXT_KINDS = ("text differs at ", "text: ")  # first character's category, then the shape
OLD_SHOWN_KINDS = ("shown text the whole decode changes", "shown U+FFFD the whole decode does not have",
                   "shown text the decode changes", "shown U+FFFD the decode does not have")


def rekinded(record: dict, folder: str | None) -> str:
    """The kind a recorded divergence gets from today's checks, from its expected and actual values
    (a report written when kinds named the first differing character's category is re-triaged so):
    ``rekinded({"component": "tokenizer", "property": "decode", "kind": "text differs at space (impl Ll)",
    "expected": " a", "actual": "a", ...}, folder) == "text: drops ' ' at the start"``; a chat render by
    the reading of the request transformers renders it by, a whole tool parse by what it read as what.
    A kind no check words otherwise now is kept; so is an ids kind when the family's folder is gone."""
    from ..checks.detokenizer import premature_kind
    from ..checks.stops import MISSED, outcome_kind
    from ..naming.shape import NOTHING_NAMED, ids_shape, text_shape

    kind = kind_of(record["signature"])
    where = f"{record['component']}/{record['property']}"
    expected, actual = record.get("expected"), record.get("actual")
    vocab = vocabulary(folder) if folder else None
    added = vocab.added_tokens if vocab else NOTHING_NAMED
    stops = (record.get("minimized_input") or record.get("input") or {}).get("stops", [])
    if kind.startswith(OLD_SHOWN_KINDS):
        return premature_kind(expected, actual, "the decode" if "server" in where else "the whole decode", added)
    if where == "detokenizer/stream" and kind.startswith(OLD_TEXT_KINDS):
        return premature_kind(expected, actual, named=added)  # the whole stream is shown text
    if where == "stops/server" and kind.startswith(OLD_TEXT_KINDS):
        stops = (record.get("first_difference") or {}).get("stops", stops)
        return outcome_kind(expected["text"], actual["text"], stops, "text")
    if kind.startswith("output differs at "):
        return outcome_kind(expected["output"], actual["output"], stops, stopped=expected["stopped"])
    if kind.startswith("released text the reference cuts off at "):
        return MISSED if actual.startswith(expected) else outcome_kind(expected[:len(actual)], actual, stops)
    if record["component"] == "chat":
        return _chat_rekinded(record, kind, folder)
    if where == "tools/whole" and "field" in (record.get("first_difference") or {}):
        return _whole_parse_rekinded(record, kind)
    if kind.startswith(OLD_TEXT_KINDS) and isinstance(expected, str) and isinstance(actual, str):
        kind = f"text: {text_shape(expected, actual, added if where == 'tokenizer/decode' else NOTHING_NAMED)}"
    if kind.startswith(("ids differ at ", "ids: ")) and vocab and ids_only(expected) and ids_only(actual):
        kind = f"ids: {ids_shape(expected, actual, vocab)}"
    if where in ("tokenizer/encode", "tokenizer/decode") and vocab and kind.startswith(("ids: ", "text: ")):
        from ..checks.tokenizer import read_otherwise
        from ..run.evidence import recorded_case
        case = recorded_case({**record, "minimized_input": record.get("minimized_input") or record.get("input")})
        kind = read_otherwise(_readings(folder), vocab, case, kind, actual)  # no engine: added-token flags alone
    return kind


def _whole_parse_rekinded(record: dict, kind: str) -> str:
    """A whole parse's "FIELD differs" told apart as today's check tells it (a call read as content,
    content read as a call); a kind led by the record's format (an engine's: one parser per format)
    keeps it."""
    from ..checks.tools import read_otherwise

    difference = record["first_difference"]
    led = f"{(record.get('minimized_input') or record.get('input') or {}).get('format')}: "
    led = led if kind.startswith(led) else ""
    if kind.removeprefix(led) != f"{difference['field']} differs":
        return kind
    return led + read_otherwise(record["expected"], record["actual"], difference)


# Kinds of a record whose actual is the engine's render.
OLD_RENDERED = ("renders where transformers raises ", *OLD_TEXT_KINDS)


def _chat_rekinded(record: dict, kind: str, folder: str | None) -> str:
    """A chat render's kind as today's check words it where impl rendered: a text by its shape, and
    first the reading of the request that makes transformers render impl's text (the template
    resolved again where it still can be: the case's own source, a shared template of the same
    digest). An error's kind is kept as recorded: today's one kind for any error transformers raises
    and the engine does not raise alike would merge an engine's unrelated bugs (a lexer's, a
    filter's) into one."""
    from textbound.oracles.chat_oracle import ChatRequest, TemplateNotFound, frozen_clock, resolve

    from ..checks.chat import INLINE_TEMPLATE, blank_variable_kind, read_otherwise, render_answer

    expected, actual = record.get("expected"), record.get("actual")
    if record["property"] != "render" or not kind.startswith(OLD_RENDERED) or not isinstance(actual, str):
        return kind
    if kind.startswith(OLD_TEXT_KINDS) and isinstance(expected, str):
        kind = _render_rekinded(kind, expected, actual)
    given = record.get("minimized_input") or record.get("input") or {}
    name = given.get("template", "")
    if not name or (INLINE_TEMPLATE not in given and name.startswith("family") and not folder):
        return kind
    try:
        source = given.get(INLINE_TEMPLATE) or resolve(name, Path(folder) if folder else None,
                                                        given.get("template_digest")).source
    except (TemplateNotFound, OSError):
        return kind  # the template is gone or has changed: the kind by the texts alone
    answer, request = render_answer(source), ChatRequest.of(given)
    with frozen_clock():
        reading = read_otherwise(answer, request, actual, None)
    return reading or (isinstance(expected, str) and blank_variable_kind(answer, request, expected, actual)) or kind


def _render_rekinded(kind: str, expected: str, actual: str) -> str:
    """A render's text kind: today's where it names the cause (whitespace alone, \\u escapes, a JSON
    value's layout); a kind by the first character's category gets today's first edit; a shape kind
    is kept over that edit, which is a template's bug in impl's words but would merge an engine's
    unrelated bugs: ``_render_rekinded("text differs at Ll (impl Cc)", "ab", "aXb") == "text:
    inserts text"``."""
    from ..checks.chat import edit_kind, escape_kind, json_kind, whitespace_kind

    named = whitespace_kind(expected, actual) or escape_kind(expected, actual) or json_kind(expected, actual)
    if named:
        return f"text: {named}"
    return f"text: {edit_kind(expected, actual)}" if kind.startswith(OLD_TEXT_KINDS[0]) else kind


@cache
def _readings(folder: str):
    from ..checks.tokenizer import FamilyReadings
    return FamilyReadings.of(folder)
