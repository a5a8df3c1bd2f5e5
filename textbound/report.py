"""Recording divergences: one JSON line each, and report.md over them.

Each divergence is appended to divergences.jsonl and flushed to disk at once, so an interrupted run
keeps everything it found; report.md and summary.json are rewritten whole through a temporary file
and a rename, so a reader never sees half of one.
"""
from __future__ import annotations

import json
import os
import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from .divergence import Divergence


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


@dataclass
class RunInfo:
    impl: str
    impl_version: str
    oracle_versions: dict[str, str]
    seed: int
    budget: str
    families: dict[str, str]  # name -> folder, so every record can be reproduced


@dataclass
class Tally:
    cases: int = 0
    divergences: int = 0


class Recorder:
    def __init__(self, report_dir: Path, info: RunInfo):
        self.dir = Path(report_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.info = info
        self.jsonl = self.dir / "divergences.jsonl"
        self._stream = self.jsonl.open("a", encoding="utf-8")
        self.tally: dict[tuple[str, str], Tally] = defaultdict(Tally)
        self.by_signature: dict[str, list[Divergence]] = defaultdict(list)
        self.seen: set[str] = set()
        self.notes: list[str] = []  # components not provided, families skipped, and why

    def count_cases(self, family: str, component: str, n: int) -> None:
        self.tally[(family, component)].cases += n

    def reproduce_command(self, divergence: Divergence) -> str:
        case = divergence.smallest
        return shlex.join(["textbound", "replay", "--impl", self.info.impl,
                           "--model-dir", self.info.families.get(case.family, case.family), case.to_json()])

    def record(self, divergence: Divergence) -> bool:
        """Appends the divergence unless this exact one is recorded already; True when new."""
        digest = divergence.digest()
        if digest in self.seen:
            return False
        self.seen.add(digest)
        case = divergence.case
        self.tally[(case.family, case.component)].divergences += 1
        self.by_signature[divergence.signature].append(divergence)
        line = {
            "component": case.component, "family": case.family, "property": case.property,
            "signature": divergence.signature, "input": case.input,
            "minimized_input": divergence.smallest.input, "expected": divergence.expected,
            "actual": divergence.actual, "first_difference": divergence.first_difference,
            "oracle_version": self.info.oracle_versions.get(case.component, ""),
            "impl": self.info.impl, "impl_version": self.info.impl_version, "seed": self.info.seed,
            "reproduce": self.reproduce_command(divergence), "digest": digest,
        }
        self._stream.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())
        return True

    def close(self) -> None:
        self._stream.close()

    # -- report.md -----------------------------------------------------------------------------

    def write_summary(self, verdict: dict) -> None:
        summary = {
            "impl": self.info.impl, "impl_version": self.info.impl_version,
            "oracles": self.info.oracle_versions, "seed": self.info.seed, "budget": self.info.budget,
            "counts": [{"family": f, "component": c, "cases": t.cases, "divergences": t.divergences}
                       for (f, c), t in sorted(self.tally.items())],
            "signatures": {s: len(ds) for s, ds in sorted(self.by_signature.items())},
            "notes": self.notes, **verdict,
        }
        write_atomically(self.dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        write_atomically(self.dir / "report.md", self.markdown(verdict))

    def markdown(self, verdict: dict) -> str:
        lines = [
            "# textbound report", "",
            f"- implementation: `{self.info.impl}` ({self.info.impl_version})",
            *(f"- oracle for {c}: {v}" for c, v in sorted(self.info.oracle_versions.items())),
            f"- budget: {self.info.budget}, seed: {self.info.seed}",
            f"- new divergences: {len(verdict.get('new', []))}, baselined: {len(verdict.get('known', []))}, "
            f"fixed baseline entries: {len(verdict.get('fixed', []))}", "",
            "## Cases and divergences per family and component", "",
            "| family | component | cases | divergences |", "| --- | --- | ---: | ---: |",
        ]
        lines += [f"| {f} | {c} | {t.cases} | {t.divergences} |" for (f, c), t in sorted(self.tally.items())]
        if self.notes:
            lines += ["", "## Not checked", "", *(f"- {n}" for n in self.notes)]
        if verdict.get("fixed"):
            lines += ["", "## Baseline entries that no longer diverge (remove them)", "",
                      *(f"- `{e['signature']}` on {e.get('family', '*')}: {e.get('reason', '')}" for e in verdict["fixed"])]
        lines += ["", "## Root causes (one entry per signature, smallest example)", ""]
        if not self.by_signature:
            lines.append("None: every checked case agreed with the oracle.")
        for signature, found in sorted(self.by_signature.items(), key=lambda kv: -len(kv[1])):
            smallest = min(found, key=lambda d: len(json.dumps(d.smallest.input, ensure_ascii=False)))
            families = Counter(d.case.family for d in found)
            lines += [
                f"### `{signature}`", "",
                f"{len(found)} divergence(s) in {', '.join(f'{f} ({n})' for f, n in families.most_common())}.", "",
                "```", f"input:    {json.dumps(smallest.smallest.input, ensure_ascii=False)}",
                f"expected: {smallest.expected!r}", f"actual:   {smallest.actual!r}",
                f"first difference: {json.dumps(smallest.first_difference, ensure_ascii=False)}", "```", "",
                f"Reproduce: `{self.reproduce_command(smallest)}`", "",
            ]
        return "\n".join(lines) + "\n"
