"""``textbound merge OUT SHARD_DIR...``: the reports of ``--shard K/N`` runs as one report.

Cases are counted once in exactly one shard, so counts and the digests of the cases add up;
divergences are de-duplicated by digest, as one run's recorder does, so a sharded run merges to the
same signatures, counts and cases digests as the unsharded run, and its signatures are grouped into
root causes by the evidence every shard gathered. A baseline entry is fixed when no shard matched it and some shard checked where
it applies. Family folders a shard wrote into its own report (fuzzed pipelines) are copied into
OUT, and the replay commands of the records point there.

    textbound check --shard 1/2 --report-dir r/1 && textbound check --shard 2/2 --report-dir r/2
    textbound merge r/all r/1 r/2          # r/all/summary.json as if one run had checked it all
"""
from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

from ..files import jsonl_line
from ..naming.baseline import BaselineEntry, Verdict, checked_by
from ..naming.root_causes import evidence_of
from ..records.run_folder import Run, holds_report, load_run
from .report import Tally, build_summary, write_outputs

HEADER = ("impl", "impl_version", "oracles", "seed", "budget", "selected_properties")


class MergeError(Exception):
    """Shard reports that cannot be merged."""


def _unique(items: list) -> list:
    seen, result = set(), []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def _fixed(runs: list[Run]) -> list[dict]:
    """Entries that no shard matched, among those some shard checked (each shard lists as fixed the
    entries it checked and did not match)."""
    candidates = _unique([entry for run in runs for entry in run.summary.get("fixed", [])])

    def unmatched_in(run: Run, entry: dict) -> bool:
        return entry in run.summary.get("fixed", []) or not checked_by(BaselineEntry.from_json(entry), run.checked or set())

    return [entry for entry in candidates if all(unmatched_in(run, entry) for run in runs)]


def _move_family_folders(runs: list[Run], out: Path) -> dict[str, str]:
    """Family folders inside a shard's report go to the same place in OUT; returns old -> new paths."""
    moved: dict[str, str] = {}
    for run in runs:
        for folder in run.summary.get("families", {}).values():
            path = Path(folder)
            try:
                relative = path.resolve().relative_to(run.dir.resolve())
            except ValueError:
                continue  # a folder outside the report (embedded, models, --model-dir): shared as is
            target = out / relative
            if not target.exists():
                shutil.copytree(path, target)
            moved[folder] = str(target)
    return moved


def _families_of(run: Run) -> tuple[str, ...]:
    """The families a run checked, sorted: its shards are those of runs with the same ones."""
    return tuple(sorted(run.summary.get("families", {})))


def _missing_shards(runs: list[Run]) -> list[str]:
    """Shards absent from the runs of each set of families (a CI job that died uploads nothing)."""
    shards_of: dict[tuple[str, ...], list[str]] = {}
    for run in runs:
        if run.summary.get("shard"):
            shards_of.setdefault(_families_of(run), []).append(run.summary["shard"])
    missing = []
    for families, shards in shards_of.items():
        count = int(shards[0].split("/")[1])
        missing += [f"shard {k}/{count} of {', '.join(families)} missing"
                    for k in sorted(set(range(1, count + 1)) - {int(s.split("/")[0]) for s in shards})]
    return missing


def merge(out: Path, shard_dirs: list[Path]) -> dict:
    """Writes the merged report into ``out``, a new folder (one holding a report is refused, so that
    no report is overwritten); returns its summary."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise MergeError(f"{out}: a file, not a folder")
    if holds_report(out):
        raise MergeError(f"{out}: holds a report already; merge into a new folder")
    runs = [load_run(d) for d in shard_dirs]
    for run in runs:
        if not run.summary:
            raise MergeError(f"{run.dir}: no summary.json (a run killed before writing one cannot be merged)")
        differing = [k for k in HEADER if run.summary.get(k) != runs[0].summary.get(k)]
        if differing:
            raise MergeError(f"{run.dir}: {', '.join(differing)} differ from {runs[0].dir}; only shards of "
                             "one run can be merged")
    given: dict[tuple, Path] = {}
    for run in runs:  # the same shard twice (a re-uploaded CI artifact) would count its cases twice
        if run.summary.get("shard"):
            key = (run.summary["shard"], _families_of(run))
            if key in given:
                raise MergeError(f"{run.dir}: shard {key[0]} of {', '.join(key[1])} is given already, as "
                                 f"{given[key]}; give each shard once")
            given[key] = run.dir
    out.mkdir(parents=True, exist_ok=True)
    moved = _move_family_folders(runs, out)
    records, digests = [], set()
    for run in runs:
        for record in run.records:
            if record["digest"] not in digests:
                digests.add(record["digest"])
                for old, new in moved.items():
                    record["reproduce"] = record["reproduce"].replace(old, new)
                records.append(record)
    tallies: defaultdict[tuple[str, str, str], Tally] = defaultdict(Tally)
    for run in runs:
        for entry in run.summary.get("properties", []):
            tallies[(entry["family"], entry["component"], entry["property"])] += Tally.of_summary(entry)
    new_in = sorted(_unique([p for run in runs for p in run.summary.get("new_in", [])]))
    known_in = sorted(_unique([p for run in runs for p in run.summary.get("known_in", [])]))
    verdict = Verdict(new_in=new_in, known_in=known_in, fixed=_fixed(runs),
                      errors=[e for run in runs for e in run.summary.get("errors", [])],
                      seconds=max(run.summary.get("seconds", 0) for run in runs),
                      slowest_case=max((run.summary.get("slowest_case", {"seconds": 0.0}) for run in runs),
                                       key=lambda case: case["seconds"]))
    problems = [f"{run.dir}: {run.summary.get('interrupted')}" for run in runs if not run.summary.get("completed", True)]
    problems += _missing_shards(runs)
    header = {k: runs[0].summary.get(k) for k in HEADER}  # selected_properties: absent before --property
    header["families"] = {name: moved.get(folder, folder) for run in runs
                          for name, folder in run.summary.get("families", {}).items()}
    state = {"completed": not problems, "interrupted": "; ".join(problems) or None, "shard": None,
             "merged_from": [str(d) for d in shard_dirs], "limits": runs[0].summary.get("limits", {}),
             "checked": sorted(_unique([p for run in runs for p in run.summary.get("checked", [])])),
             "skipped": _unique([s for run in runs for s in run.summary.get("skipped", [])]),
             "harness_errors": [e for run in runs for e in run.summary.get("harness_errors", [])],
             "oracle_disagreements_unwritten": [u for run in runs
                                                for u in run.summary.get("oracle_disagreements_unwritten", [])]}
    notes = _unique([n for run in runs for n in run.summary.get("notes", [])])
    evidence = {signature: found for run in runs for signature, found in evidence_of(run.summary).items()}
    summary = build_summary(header, tallies, records, verdict.summary_fields(), notes, state, evidence)
    (out / "divergences.jsonl").write_text("".join(jsonl_line(r) + "\n" for r in records),
                                           encoding="utf-8")
    write_outputs(out, summary, records)
    return summary
