"""Recording divergences: one JSON line each, and the reports written from them.

Each divergence is appended to divergences.jsonl and flushed to disk at once, so an interrupted run
keeps everything it found. The other files are functions of summary.json and the records alone, so
``textbound merge`` writes the same ones for shards put together; each is rewritten whole through a
temporary file and a rename, so a reader never sees half of one:

- summary.json: counts per family × component (and per property), signatures, the verdict against
  the baseline, and whether the run completed;
- report.md: the counts and one entry per root-cause signature with its smallest example;
- summary.md: a short Markdown summary for a CI step summary;
- junit.xml: one test case per family × component × property;
- report.html: a self-contained page with the counts and every signature's aligned example.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..files import jsonl_line
from ..naming.baseline import Verdict
from ..naming.divergence import Case, Divergence, is_server_error
from ..naming.signatures import SignatureGroup, signature_groups, split_records
from ..records.alignment import record_alignment, render_alignment
from ..records.run_folder import holds_report

# Oracle disagreements written per family and signature; the rest are counted, not written: a
# second oracle may part from tokenizers on every case alike (sentencepiece never matches a control
# token in text, and a full sweep puts one before every code point).
DISAGREEMENTS_KEPT = 100


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


EARLIER = "earlier"  # the folder of a report folder where the reports of earlier runs into it are kept
FUZZED = "fuzz"  # the folder of a report folder holding the run's fuzzed families


def keep_earlier_report(report_dir: Path) -> Path | None:
    """Moves the report an earlier run left in ``report_dir`` (all of it but the fuzzed families'
    folder, which its records' replays name) into ``report_dir/earlier/<when it was last
    written>`` and returns that folder, or None when ``report_dir`` holds no report. A second run
    into a folder would otherwise append its divergences to the first's under its own summary.

    ``reports/runs/gate`` run into twice keeps the first run as ``reports/runs/gate/earlier/20261203-161500``.
    """
    report_dir = Path(report_dir)
    if not holds_report(report_dir):
        return None
    entries = [path for path in report_dir.iterdir() if path.name not in (EARLIER, FUZZED)]
    written = time.strftime("%Y%m%d-%H%M%S", time.localtime(max(path.lstat().st_mtime for path in entries)))
    kept, number = report_dir / EARLIER / written, 1
    while kept.exists():  # two runs written in one second
        number += 1
        kept = report_dir / EARLIER / f"{written}-{number}"
    kept.mkdir(parents=True)
    for path in entries:
        os.replace(path, kept / path.name)
    return kept


@dataclass
class RunInfo:
    impl: str
    impl_version: str
    oracle_versions: dict[str, str]
    seed: int
    budget: str
    families: dict[str, str]  # name -> folder, so every record can be reproduced
    # How replay names the implementation when not by --impl alone: ("--server", URL, "--server-dialect", "vllm").
    impl_options: tuple[str, ...] = ()


@dataclass(frozen=True)
class HarnessError:
    """A chunk of cases the harness could not check (the check itself raised): the run fails.

        >>> HarnessError("gpt2", "tokenizer", "KeyError: 'ids'").note
        "tokenizer on gpt2: harness error KeyError: 'ids'"
    """

    family: str
    component: str
    message: str

    @property
    def note(self) -> str:
        return f"{self.component} on {self.family}: harness error {self.message}"


class Recorder:
    def __init__(self, report_dir: Path, info: RunInfo):
        self.dir = Path(report_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.info = info
        self.jsonl = self.dir / "divergences.jsonl"
        self._stream = self.jsonl.open("a", encoding="utf-8")
        self.case_counts: Counter[tuple[str, str, str]] = Counter()  # (family, component, property)
        self.records: list[dict] = []
        self.seen: set[str] = set()
        self.notes: list[str] = []  # components not provided, families skipped, and why
        self.skipped: list[dict] = []  # {"family", "component", ["property",] "reason"}: not checked at all
        self.harness_errors: list[HarnessError] = []
        self.kept_disagreements: Counter[tuple[str, str]] = Counter()  # (family, signature)
        self.unwritten_disagreements: Counter[tuple[str, str, str, str]] = Counter()  # (family, component, property, signature)

    def skip(self, family: str, component: str, reason: str, prop: str | None = None) -> None:
        """Notes a component (or one ``prop`` of it) not checked on ``family``, and why."""
        what = f"{component}/{prop}" if prop else component
        self.skipped.append({"family": family, "component": component, "reason": reason,
                             **({"property": prop} if prop else {})})
        self.notes.append(f"{what} on {family}: {reason}")

    def not_installed(self, family: str, component: str, prop: str, missing: Exception) -> None:
        """Notes ``component``/``prop`` not checked on ``family`` because an oracle library it needs is
        not installed (``missing`` says which, and the extra): skipped on each family, noted once a run."""
        reason = f"not provided: {missing}"
        self.skipped.append({"family": family, "component": component, "property": prop, "reason": reason})
        self._note_once(f"{component}/{prop}: {reason}")

    def not_consulted(self, component: str, prop: str, missing: Exception) -> None:
        """Notes once a run that ``component``/``prop``'s second oracle is not asked (``missing`` says
        why): impl is still checked, the oracle disagreements it would show are not looked for."""
        self._note_once(f"{component}/{prop}: no second opinion (oracle disagreements not looked for): {missing}")

    def _note_once(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def harness_error(self, family: str, component: str, message: str) -> None:
        error = HarnessError(family, component, message)
        self.harness_errors.append(error)
        self.notes.append(error.note)

    def count(self, family: str, component: str, cases: Iterable[Case]) -> None:
        for case in cases:
            self.case_counts[(family, component, case.property)] += 1

    @property
    def cases(self) -> int:
        return sum(self.case_counts.values())

    @property
    def oracle_disagreements(self) -> int:
        return len(split_records(self.records)[1]) + sum(self.unwritten_disagreements.values())

    def reproduce_command(self, divergence: Divergence) -> str:
        case = divergence.smallest
        return shlex.join(["textbound", "replay", *(self.info.impl_options or ("--impl", self.info.impl)),
                           "--model-dir", self.info.families.get(case.family, case.family), case.to_json()])

    def record(self, divergence: Divergence) -> bool:
        """Appends the divergence unless this exact one is recorded already; True when new."""
        digest = divergence.digest()
        if digest in self.seen:
            return False
        self.seen.add(digest)
        case = divergence.case
        if divergence.is_oracle_disagreement:
            if self.kept_disagreements[(case.family, divergence.signature)] >= DISAGREEMENTS_KEPT:
                self.unwritten_disagreements[(case.family, case.component, case.property, divergence.signature)] += 1
                return False
            self.kept_disagreements[(case.family, divergence.signature)] += 1
        line = {
            "component": case.component, "family": case.family, "property": case.property,
            "signature": divergence.signature, "input": case.input,
            "minimized_input": divergence.smallest.input, "expected": divergence.expected,
            "actual": divergence.actual, "first_difference": divergence.first_difference,
            "oracle_version": self.info.oracle_versions.get(case.component, ""),
            "impl": self.info.impl, "impl_version": self.info.impl_version, "seed": self.info.seed,
            "reproduce": self.reproduce_command(divergence), "digest": digest,
        }
        text = jsonl_line(line)
        self._stream.write(text + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self.records.append(json.loads(text))  # as a reader of the file sees it (tuples as lists)
        return True

    def close(self) -> None:
        self._stream.close()

    def write_summary(self, verdict: Verdict, completed: bool = True, interrupted: str | None = None,
                      checked: Iterable[tuple[str, str]] = (), shard: str | None = None,
                      limits: dict | None = None) -> None:
        header = {"impl": self.info.impl, "impl_version": self.info.impl_version,
                  "oracles": self.info.oracle_versions, "seed": self.info.seed, "budget": self.info.budget,
                  "families": self.info.families}
        run = {"completed": completed, "interrupted": interrupted, "shard": shard, "limits": limits or {},
               "checked": sorted(map(list, checked)),
               "skipped": self.skipped, "harness_errors": [asdict(error) for error in self.harness_errors],
               "oracle_disagreements_unwritten": [
                   {"family": family, "component": component, "property": prop, "signature": signature, "count": count}
                   for (family, component, prop, signature), count in sorted(self.unwritten_disagreements.items())]}
        summary = build_summary(header, self.case_counts, self.records, verdict.summary_fields(), self.notes, run)
        write_outputs(self.dir, summary, self.records)


def build_summary(header: dict, case_counts: Counter, records: list[dict], verdict: dict, notes: list[str],
                  run: dict) -> dict:
    """summary.json: the run's header, counts per family × component and per property, signatures,
    the verdict (new, known, fixed, new_in, known_in, seconds, errors) and the run's state. Oracle
    disagreements are counted apart from impl's divergences ("oracle_disagreements")."""
    new_in = {tuple(pair) for pair in verdict.get("new_in", [])}
    divergences, disagreements = split_records(records)
    # each written record counts once; beyond DISAGREEMENTS_KEPT, the counts of those not written
    disagreement_counts = [((r["family"], r["component"], r["property"]), r["signature"], 1) for r in disagreements] \
        + [((u["family"], u["component"], u["property"]), u["signature"], u["count"])
           for u in run.get("oracle_disagreements_unwritten", [])]
    properties: dict[tuple[str, str, str], dict] = {}
    for key in sorted(set(case_counts) | {(r["family"], r["component"], r["property"]) for r in divergences}
                      | {key for key, _, _ in disagreement_counts}):
        properties[key] = {"family": key[0], "component": key[1], "property": key[2],
                           "cases": case_counts.get(key, 0), "divergences": 0, "new": 0, "oracle_disagreements": 0}
    for record in divergences:
        entry = properties[(record["family"], record["component"], record["property"])]
        entry["divergences"] += 1
        entry["new"] += (record["family"], record["signature"]) in new_in
    disagreement_signatures: Counter[str] = Counter()
    for key, signature, count in disagreement_counts:
        properties[key]["oracle_disagreements"] += count
        disagreement_signatures[signature] += count
    counts: dict[tuple[str, str], dict] = {}
    for (family, component, _), entry in properties.items():
        total = counts.setdefault((family, component), {"family": family, "component": component, "cases": 0,
                                                        "divergences": 0, "new": 0})
        for name in ("cases", "divergences", "new"):
            total[name] += entry[name]
    signatures = Counter(r["signature"] for r in divergences)
    return {**header, "counts": list(counts.values()), "properties": list(properties.values()),
            "signatures": dict(sorted(signatures.items())),
            "oracle_disagreements": sum(disagreement_signatures.values()),
            "failed_requests": failed_requests(divergences),
            "oracle_disagreement_signatures": dict(sorted(disagreement_signatures.items())),
            "notes": notes, **verdict, **run}


def failed_requests(records: list[dict]) -> int:
    """How many requests a server under test failed: its records of kind "server error: ..."."""
    return sum(is_server_error(record["signature"]) for record in records)


def write_outputs(report_dir: Path, summary: dict, records: list[dict]) -> None:
    from . import html_report, junit

    report_dir = Path(report_dir)
    write_atomically(report_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    renderers = {"report.md": markdown_report, "summary.md": ci_markdown, "junit.xml": junit.render,
                 "report.html": html_report.render}
    for name, render in renderers.items():
        try:
            text = render(summary, records)
        except Exception as exc:  # noqa: BLE001 - a report that fails must not take the verdict with it
            text = f"{name} could not be written: {type(exc).__name__}: {exc}\n"
            print(f"textbound: {report_dir / name}: {text}", end="", file=sys.stderr)
        write_atomically(report_dir / name, text)


def stopped_by_signal(summary: dict) -> bool:
    """Whether an incomplete run was stopped by a signal (its ``interrupted`` names one, as "SIGINT")
    rather than by an error of the harness ("OSError: ...")."""
    return summary.get("interrupted") in signal.Signals.__members__


def run_state(summary: dict) -> str:
    """'completed in 12.3 s', or what stopped the run."""
    if summary.get("completed", True):
        return f"completed in {summary.get('seconds', '?')} s"
    stopped = "INTERRUPTED" if stopped_by_signal(summary) else "FAILED"
    return (f"{stopped} ({summary.get('interrupted')}) after {summary.get('seconds', '?')} s: "
            "the counts cover only what was checked before it stopped")


def ci_verdict(summary: dict) -> str:
    """summary.md's verdict: "passed" only for a completed run with no new divergence nor harness
    error; ``ci_verdict({"completed": False, "interrupted": "SIGINT"}) == "interrupted (SIGINT): incomplete"``."""
    if not summary.get("completed", True):
        if stopped_by_signal(summary):
            return f"interrupted ({summary['interrupted']}): incomplete"
        return f"failed: the run stopped on {summary.get('interrupted')}"
    if summary.get("new"):
        return "failed: new divergences"
    if summary.get("errors"):
        return "failed: harness errors"
    return "passed"


def setup_failure_markdown(message: str) -> str:
    """What summary.md's reader (a CI step summary) gets when the run could not be set up at all:
    ``setup_failure_markdown("unknown family x")`` starts ``### textbound check failed: not set up``."""
    return f"### textbound check failed: not set up\n\nNo case was checked: {message}\n"


def cell(text: str) -> str:
    """Text for a Markdown table cell: ``cell("a|b") == "a\\|b"``."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def slowest_case(summary: dict) -> str:
    """'slowest case: 1.25 s (qwen3 detokenizer/stream); case timeout 20 s'."""
    slowest, timeout = summary.get("slowest_case") or {}, summary.get("limits", {}).get("case_timeout")
    where = f" ({slowest['family']} {slowest['component']}/{slowest['property']})" if slowest.get("family") else ""
    return f"slowest case: {slowest.get('seconds', '?')} s{where}; case timeout {timeout} s"


def _count_rows(summary: dict) -> list[str]:
    return [f"| {cell(c['family'])} | {c['component']} | {c['cases']} | {c['divergences']} |" for c in summary["counts"]]


def markdown_report(summary: dict, records: list[dict]) -> str:
    """report.md: counts, notes, fixed baseline entries, and one entry per signature."""
    lines = [
        "# textbound report", "",
        f"- run: {run_state(summary)}" + (f" (shard {summary['shard']})" if summary.get("shard") else ""),
        f"- implementation: `{summary['impl']}` ({summary['impl_version']})",
        *(f"- oracle for {c}: {v}" for c, v in sorted(summary["oracles"].items())),
        f"- budget: {summary['budget']}, seed: {summary['seed']}",
        f"- {slowest_case(summary)}",
        f"- new divergences: {len(summary.get('new', []))}, baselined: {len(summary.get('known', []))}, "
        f"fixed baseline entries: {len(summary.get('fixed', []))}, "
        f"oracle disagreements: {summary.get('oracle_disagreements', 0)}",
        *([f"- requests the server failed: {summary['failed_requests']}"] if summary.get("failed_requests") else []), "",
        "## Cases and divergences per family and component", "",
        "| family | component | cases | divergences |", "| --- | --- | ---: | ---: |", *_count_rows(summary),
    ]
    if summary["notes"]:
        lines += ["", "## Not checked", "", *(f"- {n}" for n in summary["notes"])]
    if summary.get("fixed"):
        lines += ["", "## Baseline entries that no longer diverge (remove them)", "",
                  *(f"- `{e['signature']}` on {e.get('family', '*')}: {e.get('reason', '')}" for e in summary["fixed"])]
    divergences, disagreements = split_records(records)
    lines += ["", "## Root causes (one entry per signature, smallest example)", ""]
    if not divergences:
        lines.append("None: every checked case agreed with the oracle.")
    for group in signature_groups(divergences):
        lines += _signature_entry(group, f"{len(group.records)} divergence(s)", summary.get("families", {}))
    if disagreements:
        lines += ["", "## Oracle disagreements and failures (the references disagree, impl sides with one; or "
                      "the oracle hung or crashed without impl; not counted against impl)", ""]
        for group in signature_groups(disagreements):
            total = summary.get("oracle_disagreement_signatures", {}).get(group.signature, len(group.records))
            written = f" ({len(group.records)} written: at most {DISAGREEMENTS_KEPT} per family)" \
                if total > len(group.records) else ""
            lines += _signature_entry(group, f"{total} case(s){written}", summary.get("families", {}))
    return "\n".join(lines) + "\n"


def _signature_entry(group: SignatureGroup, counted: str, families: dict[str, str]) -> list[str]:
    """report.md's entry for a signature: how many (``counted``), where, its smallest example, aligned."""
    smallest = group.smallest
    return [
        f"### `{group.signature}`", "",
        f"{counted} in {', '.join(f'{f} ({n})' for f, n in group.families.most_common())}.", "",
        "```", f"input:    {json.dumps(smallest['minimized_input'], ensure_ascii=False)}",
        f"expected: {smallest['expected']!r}", f"actual:   {smallest['actual']!r}",
        f"first difference: {json.dumps(smallest['first_difference'], ensure_ascii=False)}", "",
        *render_alignment(record_alignment(smallest, families)), "```", "",
        f"Reproduce: `{smallest['reproduce']}`", "",
    ]


def ci_markdown(summary: dict, records: list[dict]) -> str:
    """summary.md, for a CI step summary: the verdict, the counts, and the new signatures."""
    new = set(summary.get("new", []))
    lines = [f"### textbound check {ci_verdict(summary)}", "",
             f"`{summary['impl']}`, budget {summary['budget']}, seed {summary['seed']}; run {run_state(summary)}.",
             f"{sum(c['cases'] for c in summary['counts']):,} cases; new signatures: {len(new)}, "
             f"baselined: {len(summary.get('known', []))}, fixed baseline entries: {len(summary.get('fixed', []))}, "
             f"oracle disagreements (not counted against impl): {summary.get('oracle_disagreements', 0)}.", "",
             "| family | component | cases | divergences |", "| --- | --- | ---: | ---: |", *_count_rows(summary)]
    new_groups = [g for g in signature_groups(records, new) if g.new]
    if new_groups:
        lines += ["", "| new signature | divergences | smallest input |", "| --- | ---: | --- |"]
        lines += [f"| `{cell(g.signature)}` | {len(g.records)} | "
                  f"`{cell(json.dumps(g.smallest['minimized_input'], ensure_ascii=False)[:120])}` |" for g in new_groups]
    lines += [f"- harness error: {e}" for e in summary.get("errors", [])]
    return "\n".join(lines) + "\n"
