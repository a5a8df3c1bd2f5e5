"""compare's reports: summary.json, report.md, and the JUnit XML and HTML page ``check`` writes.

Each change becomes a record shaped like a divergence's (OLD's value as "expected", NEW's as
"actual", the minimized example as the input), so textbound.records.junit and textbound.records.html_report
render it: one JUnit test case per component × property, failing on changes --allow does not
accept. report.md lists every change by signature, each with its example and both sides aligned,
then prefix stability per template.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from ..records.alignment import align, render_alignment
from ..records.report import cell, write_atomically
from .gate import Comparison
from .version import FamilyVersion

SIDES = ("old", "new")
SHOWN = 400  # characters of a value shown in report.md; the JSON keeps it whole


def build_summary(old: FamilyVersion, new: FamilyVersion, comparison: Comparison, run: dict,
                  unused_allow: list[dict]) -> dict:
    """summary.json: the versions, the cases run, every change (allowed or not) and the verdict."""
    pair = f"{old.name}→{new.name}"
    changed = [c for c in comparison.changes if c.allowed is None]
    properties = [{"family": pair, "component": component, "property": prop, "cases": count,
                   "divergences": sum(c.component == component and c.check == prop for c in comparison.changes),
                   "new": sum(c.component == component and c.check == prop for c in changed)}
                  for (component, prop), count in sorted(comparison.cases.items())]
    counts: dict[str, dict] = {}
    for entry in properties:
        total = counts.setdefault(entry["component"], {"family": pair, "component": entry["component"],
                                                       "cases": 0, "divergences": 0, "new": 0})
        for name in ("cases", "divergences", "new"):
            total[name] += entry[name]
    return {
        "old_version": old.source, "new_version": new.source, "impl": "textbound compare", "impl_version": pair,
        "sides": list(SIDES), "families": {}, "changes": [c.as_dict() for c in comparison.changes],
        "allowed": sorted({c.signature for c in comparison.changes
                                                                               if c.allowed is not None}),
        "new_in": sorted({(pair, c.signature) for c in changed}), "known": [], "fixed": unused_allow,
        "prefix_stability": {name: {side: _prefix_entry(result) for side, result in sides.items()}
                             for name, sides in comparison.prefix.items()},
        # "new": the signatures that fail the gate, as check's summary names them for its writers.
        "new": sorted({c.signature for c in changed}),
        "properties": properties, "counts": list(counts.values()), "notes": [], "completed": True, **run,
    }


def _prefix_entry(result) -> dict:
    return {"conversations": result.conversations, "stable": result.stable, "kind": result.kind,
            "example": result.example}


def records(summary: dict, command: list[str]) -> list[dict]:
    """The changes as divergence-shaped records, for the JUnit and HTML writers."""
    pair = summary["impl_version"]
    return [{"family": pair, "component": c["component"], "property": c["kind"].split(":", 1)[0],
             "signature": c["signature"], "input": c["example"], "minimized_input": c["example"],
             "expected": c["old"], "actual": c["new"], "first_difference": {"subject": c["subject"]},
             "reproduce": shlex.join(command)} for c in summary["changes"]]


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[:SHOWN] + f"… ({len(text)} characters)"


def _change_entry(change: dict) -> list[str]:
    allowed = f" — allowed: {change['allowed']}" if change["allowed"] else ""
    lines = [f"#### {change['subject']} ({change['cases']} case(s)){allowed}", "", "```"]
    if change["example"] is not None:
        lines.append(f"example: {_shown(change['example'])}")
    lines += [f"old:     {_shown(change['old'])}", f"new:     {_shown(change['new'])}"]
    if isinstance(change["old"], (str, list)) and isinstance(change["new"], (str, list)):
        try:
            lines += ["", *render_alignment(align(change["old"], change["new"]), SIDES)]
        except Exception as exc:  # noqa: BLE001 - the aligned view is a convenience; the values are shown above
            lines.append(f"(no aligned view: {type(exc).__name__}: {exc})")
    lines += [*(f"also:    {_shown(e)}" for e in change["more_examples"]), "```", ""]
    return lines


def markdown_report(summary: dict) -> str:
    changes = summary["changes"]
    lines = ["# textbound compare", "", f"- old: `{summary['old_version']}`", f"- new: `{summary['new_version']}`",
             *(f"- oracle for {c}: {v}" for c, v in sorted(summary.get("oracles", {}).items())),
             f"- budget: {summary['budget']}, seed: {summary['seed']}, completed in {summary['seconds']} s",
             f"- changes: {len(summary['new'])} signature(s) not allowed, {len(summary['allowed'])} allowed", "",
             "## Cases per component and property", "", "| component | property | cases | changes |",
             "| --- | --- | ---: | ---: |",
             *(f"| {p['component']} | {p['property']} | {p['cases']} | {p['divergences']} |"
               for p in summary["properties"]), ""]
    if summary["fixed"]:
        lines += ["## --allow entries that allowed nothing (remove them)", "",
                  *(f"- `{e['signature']}` ({e['family']}): {e['reason']}" for e in summary["fixed"]), ""]
    lines += ["## Changes", ""]
    if not changes:
        lines += ["None: both versions behave the same on every case.", ""]
    for signature in sorted({c["signature"] for c in changes}):
        lines += [f"### `{signature}`", ""]
        for change in (c for c in changes if c["signature"] == signature):
            lines += _change_entry(change)
    lines += _prefix_section(summary["prefix_stability"])
    return "\n".join(lines) + "\n"


def _prefix_section(prefix: dict) -> list[str]:
    """Per template, whether each version's renders are prefixes of the next turn's."""
    if not prefix:
        return []
    lines = ["## Prefix stability (the render of n messages a prefix of n + 1's, in text and ids)", "",
             "| template | old | new |", "| --- | --- | --- |"]
    broken = []
    for name, sides in sorted(prefix.items()):
        verdicts = []
        for side in SIDES:
            entry = sides.get(side)
            verdicts.append("—" if entry is None else f"stable ({entry['conversations']} conversations)"
                            if entry["stable"] else f"breaks in {entry['kind']}")
            if entry and not entry["stable"] and (side == "old" or sides.get("old") != entry):
                broken.append((name, side, entry))
        lines.append(f"| {cell(name)} | {verdicts[0]} | {verdicts[1]} |")
    lines.append("")
    for name, side, entry in broken:
        example = entry["example"]
        lines += [f"### {name} ({side}): breaks in {entry['kind']} after {example['turns']} message(s)", "", "```",
                  f"messages:  {_shown(example['messages'])}", f"variables: {_shown(example['variables'])}", "",
                  *render_alignment(align(example["shorter"], example["longer"]), ("n messages", "n + 1 messages")),
                  "```", ""]
    return lines


def write_reports(report_dir: Path, summary: dict, command: list[str]) -> None:
    from ..records import html_report, junit

    report_dir.mkdir(parents=True, exist_ok=True)
    shaped = records(summary, command)
    write_atomically(report_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    write_atomically(report_dir / "report.md", markdown_report(summary))
    write_atomically(report_dir / "junit.xml", junit.render(summary, shaped))
    write_atomically(report_dir / "report.html", html_report.render(summary, shaped))

