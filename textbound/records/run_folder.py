"""A run's report folder read back: its summary.json and the records of divergences.jsonl, as
``triage``, ``diff``, ``merge`` and ``replay`` read them.

    >>> run = load_run(Path("reports/runs/latest"))  # doctest: +SKIP
    >>> run.completed, len(run.records)
    (True, 12)

A folder holding neither file is refused; one holding divergences.jsonl alone is a run killed before
it wrote summary.json (``KILLED``), whose last record may be cut off mid-write.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..files import InputFileError, is_present, parse_json, read_json, read_text

# The interruption of a run that left no summary.json.
KILLED = "killed before it wrote summary.json"


class RunFolderError(Exception):
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
        raise RunFolderError(f"{path}: no divergences.jsonl or summary.json there (not a report folder)")
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
        raise RunFolderError(str(exc)) from None
    return run
