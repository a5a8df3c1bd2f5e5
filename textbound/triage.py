"""Triage of a run's report: root causes, each with its smallest example and both sides aligned,
and the difference between two runs.

``textbound triage REPORT_DIR`` prints, for each root cause, how often and where it occurred, the
smallest input, expected and actual side by side with the first difference marked, and the command
that replays it. A root cause is a signature, or, where the mutation catalogue reproduces their
smallest examples exactly, every signature one class explains (textbound.explanation). Lists of
ids are aligned token by token (id, piece, bytes), texts character by character (character, code
point, UTF-8 bytes); for the encode of "a1" by a tokenizer dropping the token after a digit:

       expected                      | actual
       id  piece  bytes              | id  piece  bytes
       64  "a"    61                 | 64  "a"    61
    >> 16  "1"    31                 |

``textbound diff OLD NEW`` says which signatures are new, fixed and unchanged between two runs.
"""
from __future__ import annotations

import difflib
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .divergence import is_oracle_disagreement, kind_of
from .files import InputFileError, is_present, parse_json, read_json, read_text
from .shape import Vocabulary

WINDOW_BEFORE, WINDOW_AFTER = 6, 10  # aligned rows shown around the first difference
MISSING = object()


# The interruption of a run that left no summary.json.
KILLED = "killed before it wrote summary.json"


class TriageError(Exception):
    """A report folder that cannot be read."""


@dataclass
class Run:
    """A report folder: summary.json and the records of divergences.jsonl."""

    dir: Path
    summary: dict
    records: list[dict]

    @property
    def completed(self) -> bool:
        """Whether the run finished: a folder without summary.json holds a run killed before writing it."""
        return bool(self.summary) and self.summary.get("completed", True)

    @property
    def interrupted(self) -> str | None:
        """What stopped an incomplete run ("SIGINT", an error, KILLED), or None."""
        if self.completed:
            return None
        return self.summary.get("interrupted") if self.summary else KILLED

    @property
    def checked(self) -> set[tuple[str, str]] | None:
        """(family, component) pairs the run checked; None for reports that do not say."""
        pairs = self.summary.get("checked")
        return None if pairs is None else {tuple(pair) for pair in pairs}


REPORT_RECORDS = ("divergences.jsonl", "summary.json")  # what makes a folder a report folder


def holds_report(folder: Path) -> bool:
    """Whether ``folder`` holds a run's report (its divergences.jsonl or summary.json)."""
    return any(is_present(Path(folder) / name) for name in REPORT_RECORDS)


def load_run(path: Path) -> Run:
    path = Path(path)
    jsonl, summary = (path / name for name in REPORT_RECORDS)
    if not holds_report(path):
        raise TriageError(f"{path}: no divergences.jsonl or summary.json there (not a report folder)")
    try:
        run = Run(path, read_json(summary) if is_present(summary) else {}, [])
        # split("\n"), not splitlines(): records keep U+2028, U+0085 and the like as they are
        lines = read_text(jsonl).split("\n") if is_present(jsonl) else []
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    run.records.append(parse_json(line, f"{jsonl}: line {number}"))
                except InputFileError:
                    # A record always ends with a newline: text after the last one that is no record
                    # was cut off mid-write, which only an incomplete run may hold.
                    if number < len(lines) or run.completed:
                        raise
                    print(f"textbound: {jsonl}: line {number} is cut off (the run stopped while writing it); "
                          f"the records before it are read", file=sys.stderr)
    except InputFileError as exc:
        raise TriageError(str(exc)) from None
    return run


def input_size(record: dict) -> int:
    return len(json.dumps(record["minimized_input"], ensure_ascii=False))


@dataclass
class SignatureGroup:
    """Every record of one root-cause signature."""

    signature: str
    records: list[dict]
    new: bool = False

    @property
    def families(self) -> Counter:
        return Counter(r["family"] for r in self.records)

    @property
    def smallest(self) -> dict:
        return min(self.records, key=input_size)


def split_records(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """impl's divergences, and the oracle disagreements (two references disagree; reported apart)."""
    disagreements = [r for r in records if is_oracle_disagreement(r["signature"])]
    return [r for r in records if not is_oracle_disagreement(r["signature"])], disagreements


def signature_groups(records: list[dict], new: set[str] = frozenset()) -> list[SignatureGroup]:
    """Records grouped by signature, the most frequent first."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(record["signature"], []).append(record)
    return sorted((SignatureGroup(s, rs, s in new) for s, rs in groups.items()),
                  key=lambda g: (-len(g.records), g.signature))


@cache
def vocabulary(folder: str) -> Vocabulary | None:
    """The vocabulary of a family folder, or None when it is gone (a report read elsewhere)."""
    try:
        return Vocabulary(Path(folder))
    except Exception:  # noqa: BLE001 - pieces are a convenience: ids alone still triage
        return None


# -- alignment -----------------------------------------------------------------------------------


@dataclass
class Row:
    expected: tuple[str, ...] | None  # cells of the expected side; None where it has nothing here
    actual: tuple[str, ...] | None
    differs: bool


@dataclass
class Alignment:
    """Expected and actual side by side, cut to a window around the first differing row."""

    path: str  # where in the values the compared parts are ("" for the whole values)
    columns: tuple[str, ...]
    rows: list[Row]
    first: int | None  # index in rows of the first difference
    hidden_before: int = 0
    hidden_after: int = 0
    notes: list[str] = field(default_factory=list)


def _descend(expected, actual) -> tuple[str, object, object]:
    """The innermost differing parts: the first differing key of two dicts with the same keys, the
    first differing item of two lists of the same length (unless they are lists of ids)."""
    path = ""
    while True:
        if isinstance(expected, dict) and isinstance(actual, dict) and expected.keys() == actual.keys():
            key = next((k for k in expected if expected[k] != actual[k]), None)
            if key is None:
                break
            path, expected, actual = f"{path}.{key}", expected[key], actual[key]
        elif (isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual)
              and not (_ids(expected) and _ids(actual))):
            index = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), None)
            if index is None:
                break
            path, expected, actual = f"{path}[{index}]", expected[index], actual[index]
        else:
            break
    return path, expected, actual


def _ids(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _hex(data: bytes | None) -> str:
    return "?" if data is None else data.hex(" ")


def _token_cells(vocab: Vocabulary | None):
    def cells(token_id: int) -> tuple[str, ...]:
        if vocab is None:
            return (str(token_id),)
        piece = vocab.piece(token_id)
        return (str(token_id), "?" if piece is None else json.dumps(piece, ensure_ascii=False),
                _hex(vocab.token_bytes(token_id)))
    return cells


def _char_cells(char: str) -> tuple[str, ...]:
    return json.dumps(char, ensure_ascii=False), f"U+{ord(char):04X}", _hex(char.encode("utf-8", "surrogatepass"))


def _item_cells(item) -> tuple[str, ...]:
    return (json.dumps(item, ensure_ascii=False),)


def _hashable(items: list | str) -> list | str:
    """What difflib can compare: items as they are, or as JSON when they are lists or dicts."""
    if isinstance(items, str) or all(isinstance(i, (str, int, float, bool, type(None))) for i in items):
        return items
    return [json.dumps(i, sort_keys=True, ensure_ascii=False) for i in items]


def align(expected, actual, vocab: Vocabulary | None = None) -> Alignment:
    """Expected and actual aligned item by item (difflib), with the first difference marked."""
    path, expected, actual = _descend(expected, actual)
    if _ids(expected) and _ids(actual):
        columns = ("id", "piece", "bytes") if vocab else ("id",)
        cells = _token_cells(vocab)
    elif isinstance(expected, str) and isinstance(actual, str):
        columns, cells = ("char", "code point", "bytes"), _char_cells
    elif isinstance(expected, list) and isinstance(actual, list):
        columns, cells = ("item",), _item_cells
    else:
        row = Row(_item_cells(expected), _item_cells(actual), expected != actual)
        return Alignment(path, ("value",), [row], 0 if row.differs else None)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, _hashable(expected), _hashable(actual), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for offset in range(max(a1 - a0, b1 - b0)):
            left = expected[a0 + offset] if a0 + offset < a1 else MISSING
            right = actual[b0 + offset] if b0 + offset < b1 else MISSING
            rows.append(Row(None if left is MISSING else cells(left), None if right is MISSING else cells(right),
                            tag != "equal"))
    first = next((i for i, row in enumerate(rows) if row.differs), None)
    start = max(0, (first or 0) - WINDOW_BEFORE)
    end = min(len(rows), (first or 0) + WINDOW_AFTER + 1)
    return Alignment(path, columns, rows[start:end], None if first is None else first - start,
                     hidden_before=start, hidden_after=len(rows) - end)


def record_alignment(record: dict, families: dict[str, str]) -> Alignment:
    """The alignment of a record's expected and actual, with the pieces of its family's vocabulary;
    should aligning fail on some value, both sides plainly, so a report never loses an entry to it."""
    folder = families.get(record.get("family"))
    expected, actual = record.get("expected"), record.get("actual")
    try:
        return align(expected, actual, vocabulary(folder) if folder else None)
    except Exception as exc:  # noqa: BLE001 - the aligned view is a convenience; the values must still show
        return Alignment("", ("value",), [Row((repr(expected),), (repr(actual),), expected != actual)], 0,
                         notes=[f"no aligned view: {type(exc).__name__}: {exc}"])


def render_alignment(alignment: Alignment, sides: tuple[str, str] = ("expected", "actual")) -> list[str]:
    """Plain-text lines: the expected side | the actual side (named by ``sides``), ">>" on the
    first differing row."""
    def joined(cells: tuple[str, ...] | None) -> str:
        return "  ".join(c[:40].ljust(widths[i]) for i, c in enumerate(cells)) if cells else ""

    widths = [max([len(name), *(len(c[:40]) for row in alignment.rows for side in (row.expected, row.actual)
                                if side for c in side[i:i + 1])]) for i, name in enumerate(alignment.columns)]
    width = sum(widths) + 2 * (len(widths) - 1)
    lines = [f"   at {alignment.path}" if alignment.path else None,
             f"   {sides[0].ljust(width)} | {sides[1]}",
             f"   {joined(alignment.columns).ljust(width)} | {joined(alignment.columns)}"]
    if alignment.hidden_before:
        lines.append(f"   ... {alignment.hidden_before} equal row(s) before")
    for index, row in enumerate(alignment.rows):
        mark = ">>" if index == alignment.first else ("* " if row.differs else "  ")
        lines.append(f"{mark} {joined(row.expected).ljust(width)} | {joined(row.actual)}".rstrip())
    if alignment.hidden_after:
        lines.append(f"   ... {alignment.hidden_after} more row(s)")
    lines += [f"   ({note})" for note in alignment.notes]
    return [line for line in lines if line is not None]


# -- the commands ----------------------------------------------------------------------------------


@dataclass
class RootCause:
    """The signatures one diagnosis covers: those whose smallest examples the same catalogue classes
    (``mutants``) reproduce exactly, or a single signature that none does (``mutants`` empty) or
    that was not put to the catalogue (``mutants`` None)."""

    groups: list[SignatureGroup]
    mutants: tuple | None = None  # mutants.Mutant, each reproducing every group's smallest example

    @property
    def records(self) -> list[dict]:
        return [record for group in self.groups for record in group.records]

    @property
    def families(self) -> Counter:
        return sum((group.families for group in self.groups), Counter())

    @property
    def smallest_group(self) -> SignatureGroup:
        """The group holding the smallest example: one the explanation was seen to reproduce."""
        return min(self.groups, key=lambda g: input_size(g.smallest))


def root_causes(groups: list[SignatureGroup], families: dict[str, str], explain: bool) -> list[RootCause]:
    """Signature groups as root causes, the most frequent first: with ``explain``, the signatures
    whose smallest examples the same catalogue classes reproduce exactly are one root cause, the class
    (issue 18: a divergence a mutant reproduces exactly is explained by that class); a signature no
    class reproduces, or whose smallest example cannot be put to the catalogue, stays alone."""
    if not explain:
        return [RootCause([group]) for group in groups]
    from .explanation import explaining_mutants

    by_classes: dict[tuple, RootCause] = {}
    causes = []
    for group in groups:
        mutants = tuple(explaining_mutants(group.smallest, families))
        if not mutants:
            causes.append(RootCause([group], ()))
        elif mutants in by_classes:
            by_classes[mutants].groups.append(group)
        else:
            causes.append(by_classes.setdefault(mutants, RootCause([group], mutants)))
    return sorted(causes, key=lambda c: (-len(c.records), c.groups[0].signature))


def _signature_line(group: SignatureGroup) -> str:
    mark = "   NEW" if group.new else "   (oracle disagreement)" if is_oracle_disagreement(group.signature) else ""
    return group.signature + mark


def _cause_lines(number: int, cause: RootCause, families: dict[str, str]) -> list[str]:
    """A root cause: its signature (or, explained, its class and every signature under it), where
    it occurred, the smallest example aligned and its replay command."""
    group = cause.smallest_group
    smallest, count = group.smallest, len(cause.records)
    where = ", ".join(f"{f} ({n})" for f, n in cause.families.most_common())
    given = json.dumps(smallest["minimized_input"], ensure_ascii=False)
    explanation = None
    if cause.mutants is not None:
        from .explanation import explanation_line
        explanation = explanation_line(list(cause.mutants))
    if cause.mutants:
        lines = [f"{number}. {explanation}", f"   {len(cause.groups)} signature(s), {count} divergence(s): {where}",
                 *(f"   - {_signature_line(g)} ({len(g.records)})" for g in cause.groups),
                 f"   smallest ({smallest['family']}, {group.signature}): {given}"]
    else:
        lines = [f"{number}. {_signature_line(group)}", f"   {count} divergence(s): {where}",
                 f"   smallest ({smallest['family']}): {given}"]
    return [*lines, *render_alignment(record_alignment(smallest, families)),
            *([f"   {explanation}"] if cause.mutants == () else []),
            f"   replay: {smallest['reproduce']}", ""]


def triage_text(run: Run, explain: bool = False) -> str:
    """The triage of a run; with ``explain``, each signature's smallest example is also put to the
    mutation catalogue (textbound.explanation), and the signatures the same classes reproduce
    exactly are shown as one root cause, that class:

        1. explained by stops_within_delta (a stop string split across deltas missed)
           2 signature(s), 114 divergence(s): gpt2 (114)
           - stops/stream/releases text that may begin a stop   NEW (93)
           - stops/pipeline/missed a stop   NEW (21)
           smallest (gpt2, stops/stream/releases text that may begin a stop): {"text": ...}
    """
    summary = run.summary
    divergences, disagreements = split_records(run.records)
    families = summary.get("families", {})
    groups = signature_groups(divergences, set(summary.get("new", [])))
    causes = root_causes(groups, families, explain)
    state = "completed" if run.completed else f"INTERRUPTED ({run.interrupted})"
    counted = f"{len(groups)} signature(s)" + (f" in {len(causes)} root cause(s)" if explain else "")
    lines = [f"{run.dir}: impl {summary.get('impl', '?')}, {counted}, "
             f"{len(divergences)} divergence(s), {len(disagreements)} oracle disagreement(s); run {state}", ""]
    for number, cause in enumerate([*causes, *(RootCause([g]) for g in signature_groups(disagreements))], 1):
        lines += _cause_lines(number, cause, families)
    if not groups:
        lines.append("No divergence: every checked case agreed with the oracle.")
    return "\n".join(lines) + "\n"


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
    from .checks.detokenizer import premature_kind
    from .checks.stops import MISSED, outcome_kind
    from .shape import NOTHING_NAMED, ids_shape, text_shape

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
    if kind.startswith(("ids differ at ", "ids: ")) and vocab and _ids(expected) and _ids(actual):
        kind = f"ids: {ids_shape(expected, actual, vocab)}"
    if where in ("tokenizer/encode", "tokenizer/decode") and vocab and kind.startswith(("ids: ", "text: ")):
        from .checks.tokenizer import read_otherwise
        from .explanation import recorded_case
        case = recorded_case({**record, "minimized_input": record.get("minimized_input") or record.get("input")})
        kind = read_otherwise(_readings(folder), vocab, case, kind, actual)  # no engine: added-token flags alone
    return kind


def _whole_parse_rekinded(record: dict, kind: str) -> str:
    """A whole parse's "FIELD differs" told apart as today's check tells it (a call read as content,
    content read as a call); a kind led by the record's format (an engine's: one parser per format)
    keeps it."""
    from .checks.tools import read_otherwise

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
    from .checks.chat import INLINE_TEMPLATE, blank_variable_kind, read_otherwise, render_answer

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
    from .checks.chat import edit_kind, escape_kind, json_kind, whitespace_kind

    named = whitespace_kind(expected, actual) or escape_kind(expected, actual) or json_kind(expected, actual)
    if named:
        return f"text: {named}"
    return f"text: {edit_kind(expected, actual)}" if kind.startswith(OLD_TEXT_KINDS[0]) else kind


@cache
def _readings(folder: str):
    from .checks.tokenizer import FamilyReadings
    return FamilyReadings.of(folder)
