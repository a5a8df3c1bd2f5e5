"""Recording divergences: one JSON line each, and the reports written from them.

Each divergence is appended to divergences.jsonl and flushed to disk at once, so an interrupted run
keeps everything it found. The other files are functions of summary.json and the records alone, so
``textbound merge`` writes the same ones for shards put together; each is rewritten whole through a
temporary file and a rename, so a reader never sees half of one:

- summary.json: counts per family × component (and per property) with a digest of the cases
  counted, signatures, root causes (the signatures one bug gives, grouped by the evidence the run
  gathered: textbound.naming.root_causes), the verdict against the baseline, and whether the run completed;
- report.md: the root causes, each with its signatures and its smallest example (a stream as a
  timeline of its calls), then the counts;
- summary.md: a short Markdown summary for a CI step summary;
- junit.xml: one test case per family × component × property;
- report.html: a self-contained page with the root causes, the counts and every example.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..files import jsonl_line
from ..naming.baseline import BaselineEntry, Verdict
from ..naming.divergence import Case, Divergence, is_server_error
from ..naming.root_causes import Evidence, not_minimized_counts, root_causes, summary_root_causes
from ..naming.signatures import SignatureGroup, is_minimized, signature_groups, split_records
from ..records.alignment import labelled_example, record_alignment, render_alignment, render_timeline
from ..records.run_folder import holds_report

# Oracle disagreements written per family and signature; the rest are counted, not written: a
# second oracle may part from tokenizers on every case alike (sentencepiece never matches a control
# token in text, and a full sweep puts one before every code point).
DISAGREEMENTS_KEPT = 100


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


CASES_DIGEST_BYTES = 16  # a case's digest, and their sum modulo 2**128: the cases_digest of summary.json
CASES_DIGEST_MODULUS = 2 ** (8 * CASES_DIGEST_BYTES)


def case_digest(case: Case) -> int:
    """A number standing for the case as replayed (component, property, family and input, key order
    kept); the same case gives the same number on any machine and install."""
    text = case.to_json().encode("utf-8", "surrogatepass")  # a decode may hand back a lone surrogate
    return int.from_bytes(hashlib.blake2b(text, digest_size=CASES_DIGEST_BYTES).digest(), "big")


@dataclass
class Tally:
    """The cases checked of one family × component (× property): how many, and the sum of their
    ``case_digest`` modulo 2**128, so that the digest does not depend on the order cases came back
    in, and the shards of a run add up to the digest of the run unsharded. None where a part of the
    tally had no digest (a summary.json written before there was one).

        >>> tally = Tally(); tally.add(Case("tokenizer", "encode", "gpt2", {"text": "a"})); tally.cases
        1
        >>> (Tally(1, 3) + Tally(2, 2**128 - 1)).summary()
        {'cases': 3, 'cases_digest': '00000000000000000000000000000002'}
    """

    cases: int = 0
    digest: int | None = 0

    def add(self, case: Case) -> None:
        self.cases += 1
        if self.digest is not None:
            self.digest = (self.digest + case_digest(case)) % CASES_DIGEST_MODULUS

    def __add__(self, other: "Tally") -> "Tally":
        known = self.digest is not None and other.digest is not None
        return Tally(self.cases + other.cases, (self.digest + other.digest) % CASES_DIGEST_MODULUS if known else None)

    def summary(self) -> dict:
        """Its fields in summary.json: two runs with equal ones checked the same cases."""
        digest = None if self.digest is None else f"{self.digest:0{2 * CASES_DIGEST_BYTES}x}"
        return {"cases": self.cases, "cases_digest": digest}

    @classmethod
    def of_summary(cls, entry: dict) -> "Tally":
        """The tally a summary.json's entry (of "counts" or "properties") holds."""
        digest = entry.get("cases_digest")
        return cls(entry["cases"], None if digest is None else int(digest, 16))


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
    # What the implementation reads from the environment, set before replay: (("TEXTBOUND_ENGINE_CMD", "node e.js"),).
    impl_environment: tuple[tuple[str, str], ...] = ()
    selected_properties: tuple[str, ...] = ()  # --property's "component/property" names; () for every one


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


def reproduce_command(divergence: Divergence, info: RunInfo) -> str:
    """The shell command that replays the divergence's smallest case, as it runs when pasted:
    ``textbound replay --impl textbound.impl --model-dir /path/to/gpt2 '{"component": "tokenizer", ...}'``,
    or ``TEXTBOUND_ENGINE_CMD='node e.js' textbound replay --impl textbound.adapters.jsonl_engine ...``."""
    case = divergence.smallest
    command = shlex.join(["textbound", "replay", *(info.impl_options or ("--impl", info.impl)),
                          "--model-dir", info.families.get(case.family, case.family), case.to_json()])
    # NAME='value' is an assignment to the shell; 'NAME=value', as shlex.join would quote it, a command name.
    return " ".join([*(f"{name}={shlex.quote(value)}" for name, value in info.impl_environment), command])


def record_line(divergence: Divergence, info: RunInfo) -> str:
    """The line of divergences.jsonl recording ``divergence`` (its JSON, as ``json.loads`` gives a
    reader the record: ``{"component": "stops", "family": "gpt2", ..., "reproduce": "textbound replay
    ...", "digest": "..."}``)."""
    case = divergence.case
    return jsonl_line({
        "component": case.component, "family": case.family, "property": case.property,
        "signature": divergence.signature, "input": case.input,
        "minimized_input": divergence.smallest.input, "expected": divergence.expected,
        "actual": divergence.actual, "first_difference": divergence.first_difference,
        "oracle_version": info.oracle_versions.get(case.component, ""),
        "impl": info.impl, "impl_version": info.impl_version, "seed": info.seed,
        "reproduce": reproduce_command(divergence, info), "digest": divergence.digest(),
    })


class Recorder:
    def __init__(self, report_dir: Path, info: RunInfo):
        self.dir = Path(report_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.info = info
        self.jsonl = self.dir / "divergences.jsonl"
        self._stream = self.jsonl.open("a", encoding="utf-8")
        self.tallies: defaultdict[tuple[str, str, str], Tally] = defaultdict(Tally)  # (family, component, property)
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
            self.tallies[(family, component, case.property)].add(case)

    @property
    def cases(self) -> int:
        return sum(tally.cases for tally in self.tallies.values())

    @property
    def oracle_disagreements(self) -> int:
        return len(split_records(self.records)[1]) + sum(self.unwritten_disagreements.values())

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
        text = record_line(divergence, self.info)
        self._stream.write(text + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self.records.append(json.loads(text))  # as a reader of the file sees it (tuples as lists)
        return True

    def close(self) -> None:
        self._stream.close()

    def write_summary(self, verdict: Verdict, completed: bool = True, interrupted: str | None = None,
                      checked: Iterable[tuple[str, str]] = (), shard: str | None = None,
                      limits: dict | None = None, evidence: dict[str, Evidence] | None = None) -> None:
        header = {"impl": self.info.impl, "impl_version": self.info.impl_version,
                  "oracles": self.info.oracle_versions, "seed": self.info.seed, "budget": self.info.budget,
                  "selected_properties": list(self.info.selected_properties) or None, "families": self.info.families}
        run = {"completed": completed, "interrupted": interrupted, "shard": shard, "limits": limits or {},
               "checked": sorted(map(list, checked)),
               "skipped": self.skipped, "harness_errors": [asdict(error) for error in self.harness_errors],
               "oracle_disagreements_unwritten": [
                   {"family": family, "component": component, "property": prop, "signature": signature, "count": count}
                   for (family, component, prop, signature), count in sorted(self.unwritten_disagreements.items())]}
        summary = build_summary(header, self.tallies, self.records, verdict.summary_fields(), self.notes, run,
                                evidence)
        write_outputs(self.dir, summary, self.records)


def build_summary(header: dict, tallies: Mapping[tuple[str, str, str], Tally], records: list[dict], verdict: dict,
                  notes: list[str], run: dict, evidence: dict[str, Evidence] | None = None) -> dict:
    """summary.json: the run's header, counts per family × component and per property (with the
    digest of the cases counted: ``Tally``), signatures, root causes (grouped by ``evidence``, kept as
    "root_cause_evidence"), the records found but not minimized, the verdict (new, known, fixed,
    new_in, known_in, seconds, errors) and the run's state. Oracle disagreements are counted apart
    from impl's divergences ("oracle_disagreements")."""
    new_in = {tuple(pair) for pair in verdict.get("new_in", [])}
    divergences, disagreements = split_records(records)
    # each written record counts once; beyond DISAGREEMENTS_KEPT, the counts of those not written
    disagreement_counts = [((r["family"], r["component"], r["property"]), r["signature"], 1) for r in disagreements] \
        + [((u["family"], u["component"], u["property"]), u["signature"], u["count"])
           for u in run.get("oracle_disagreements_unwritten", [])]
    properties: dict[tuple[str, str, str], dict] = {}
    for key in sorted(set(tallies) | {(r["family"], r["component"], r["property"]) for r in divergences}
                      | {key for key, _, _ in disagreement_counts}):
        properties[key] = {"family": key[0], "component": key[1], "property": key[2],
                           **tallies.get(key, Tally()).summary(), "divergences": 0, "new": 0, "oracle_disagreements": 0}
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
        total = counts.setdefault((family, component), {"family": family, "component": component,
                                                        **Tally().summary(), "divergences": 0, "new": 0})
        total.update((Tally.of_summary(total) + Tally.of_summary(entry)).summary())
        for name in ("divergences", "new"):
            total[name] += entry[name]
    signatures = Counter(r["signature"] for r in divergences)
    evidence = evidence or {}
    causes = [cause.summary_entry(verdict.get("new", ())) for cause in root_causes(divergences, evidence)]
    return {**header, "counts": list(counts.values()), "properties": list(properties.values()),
            "signatures": dict(sorted(signatures.items())), "root_causes": causes,
            "root_cause_evidence": {signature: found.to_json() for signature, found in sorted(evidence.items())},
            "not_minimized": not_minimized_counts(divergences),
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
    """report.md: the run, its root causes (each with its signatures and smallest example), the counts,
    what was not checked, what was found but not minimized, fixed baseline entries, and the oracle
    disagreements apart."""
    divergences, disagreements = split_records(records)
    causes = summary_root_causes(summary, divergences)
    lines = [
        "# textbound report", "",
        f"- run: {run_state(summary)}" + (f" (shard {summary['shard']})" if summary.get("shard") else ""),
        f"- implementation: `{summary['impl']}` ({summary['impl_version']})",
        *(f"- oracle for {c}: {v}" for c, v in sorted(summary["oracles"].items())),
        f"- budget: {summary['budget']}, seed: {summary['seed']}"
        + (f", properties: {', '.join(summary['selected_properties'])} only" if summary.get("selected_properties") else ""),
        f"- {slowest_case(summary)}",
        f"- root causes: {len(causes)} (new: {sum(bool(c.get('new')) for c in causes)}), in "
        f"{len(summary.get('signatures', {}))} signature(s)",
        f"- new divergences: {len(summary.get('new', []))}, baselined: {len(summary.get('known', []))}, "
        f"fixed baseline entries: {len(summary.get('fixed', []))}, "
        f"oracle disagreements: {summary.get('oracle_disagreements', 0)}",
        *([f"- requests the server failed: {summary['failed_requests']}"] if summary.get("failed_requests") else []), "",
        "## Root causes (the signatures one bug gives, with its smallest example)", "",
    ]
    if not causes:
        lines.append("None: every checked case agreed with the oracle.")
    evidence = summary.get("root_cause_evidence") or {}
    for number, cause in enumerate(causes, 1):
        lines += _root_cause_entry(number, cause, summary.get("families", {}), evidence)
    lines += ["## Cases and divergences per family and component", "",
              "| family | component | cases | divergences |", "| --- | --- | ---: | ---: |", *_count_rows(summary)]
    if summary["notes"]:
        lines += ["", "## Not checked", "", *(f"- {n}" for n in summary["notes"])]
    if summary.get("not_minimized"):
        lines += ["", "## Found, not minimized (smaller examples of the same signatures were)", "",
                  "A worker minimizes the first few divergences of a signature in each chunk and records the "
                  "rest as found; first_difference.minimization says why each was not.", "",
                  *(f"- {e['signature']} on {e['family']}: {e['count']}" for e in summary["not_minimized"])]
    if summary.get("fixed"):
        lines += ["", "## Baseline entries that no longer diverge (remove them)", "",
                  *(f"- {BaselineEntry.from_json(e).label}: {e.get('reason', '')}" for e in summary["fixed"])]
    if disagreements:
        lines += ["", "## Oracle disagreements and failures (the references disagree, impl sides with one; or "
                      "the oracle hung or crashed without impl; not counted against impl)", ""]
        for group in signature_groups(disagreements):
            total = summary.get("oracle_disagreement_signatures", {}).get(group.signature, len(group.records))
            written = f" ({len(group.records)} written: at most {DISAGREEMENTS_KEPT} per family)" \
                if total > len(group.records) else ""
            lines += _signature_entry(group, f"{total} case(s){written}", summary.get("families", {}))
    return "\n".join(lines) + "\n"


def example_sides(smallest: dict, families: dict[str, str], evidence: dict) -> list[str]:
    """An example's stream as a timeline where the evidence holds one of this very input, else its
    expected and actual aligned."""
    timeline = (evidence.get(smallest["signature"]) or {}).get("timeline")
    if timeline and timeline.get("input") == smallest.get("minimized_input"):
        return render_timeline(timeline)
    return render_alignment(record_alignment(smallest, families))


def example_view(smallest: dict, families: dict[str, str], evidence: dict) -> list[str]:
    """An example's labelled fields, then its two sides (``example_sides``)."""
    return [*labelled_example(smallest), "", *example_sides(smallest, families, evidence)]


def minimization_note(record: dict) -> str:
    """"" for a minimized example, else why it is not: `` (not minimized: ...)``."""
    return "" if is_minimized(record) else f" ({record['first_difference']['minimization']})"


def _root_cause_entry(number: int, cause: dict, families: dict[str, str], evidence: dict) -> list[str]:
    """report.md's entry for a root cause: what names it, its signatures, its smallest example."""
    smallest = cause["smallest"]
    where = ", ".join(f"{f} ({n})" for f, n in cause["families"].items())
    lines = [f"### {number}. `{cause['name']}`" + (" (new)" if cause.get("new") else ""), ""]
    lines += [f"Reproduced exactly by the catalogue's `{e['mutant']}`: {e['bug']}." for e in cause.get("explained_by", [])]
    if cause.get("culprit"):
        lines.append(f"Comes from `{cause['culprit']}`: its oracle-backed stand-in makes the examples agree.")
    lines += ["", f"{cause['cases']} divergence(s) in {len(cause['signatures'])} signature(s), in {where}:", "",
              *(f"- `{s['signature']}` ({s['cases']})" + (" new" if s.get("new") else "") for s in cause["signatures"]),
              "", f"Smallest example ({smallest['family']}, `{smallest['signature']}`){minimization_note(smallest)}:", "",
              "```", *example_view(smallest, families, evidence), "```", "",
              f"Reproduce: `{smallest['reproduce']}`", ""]
    return lines


def _signature_entry(group: SignatureGroup, counted: str, families: dict[str, str]) -> list[str]:
    """report.md's entry for a signature: how many (``counted``), where, its smallest example, aligned."""
    smallest = group.smallest
    return [
        f"### `{group.signature}`", "",
        f"{counted} in {', '.join(f'{f} ({n})' for f, n in group.families.most_common())}.", "",
        "```", *example_view(smallest, families, {}), "```", "",
        f"Reproduce: `{smallest['reproduce']}`", "",
    ]


def ci_markdown(summary: dict, records: list[dict]) -> str:
    """summary.md, for a CI step summary: the verdict, the new root causes, and the counts."""
    divergences = split_records(records)[0]
    new_causes = [c for c in summary_root_causes(summary, divergences) if c.get("new")]
    lines = [f"### textbound check {ci_verdict(summary)}", "",
             f"`{summary['impl']}`, budget {summary['budget']}, seed {summary['seed']}; run {run_state(summary)}.",
             f"{sum(c['cases'] for c in summary['counts']):,} cases; new root causes: {len(new_causes)} "
             f"(new signatures: {len(summary.get('new', []))}), baselined signatures: {len(summary.get('known', []))}, "
             f"fixed baseline entries: {len(summary.get('fixed', []))}, "
             f"oracle disagreements (not counted against impl): {summary.get('oracle_disagreements', 0)}."]
    if new_causes:
        lines += ["", "| new root cause | signatures | divergences | smallest example |", "| --- | --- | ---: | --- |"]
        lines += [f"| `{cell(c['name'])}` | {cell('; '.join(s['signature'] for s in c['signatures']))} | {c['cases']} | "
                  f"`{cell(json.dumps(c['smallest']['minimized_input'], ensure_ascii=False)[:120])}`"
                  f"{cell(minimization_note(c['smallest']))} |" for c in new_causes]
    lines += ["", "| family | component | cases | divergences |", "| --- | --- | ---: | ---: |", *_count_rows(summary)]
    lines += [f"- harness error: {e}" for e in summary.get("errors", [])]
    return "\n".join(lines) + "\n"
