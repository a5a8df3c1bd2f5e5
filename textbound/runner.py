"""The run behind ``textbound check``: cases for every family and component, checked, minimized,
recorded, and judged against the baseline.

Work is cut into chunks of cases; with ``--jobs N`` the chunks run in N worker processes, each of
which loads a family's tokenizers once and keeps them.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .baseline import BaselineEntry, judge
from .budget import Budget
from .checks import Subject, run_check
from .divergence import Case, Divergence
from .implementation import Implementation
from .minimize import minimize
from .report import Recorder
from .sources import Family

CHUNK = 1500  # cases per task: large enough to amortize a batch oracle call, small enough to spread


@dataclass
class Task:
    family: Family
    component: str
    cases: list[Case]


@dataclass
class TaskResult:
    family: str
    component: str
    cases: int
    divergences: list[Divergence] = field(default_factory=list)
    error: str | None = None


_SUBJECTS: dict[tuple[str, str], Subject] = {}


def _subject(impl_name: str, family: Family) -> Subject:
    key = (impl_name, str(family.path))
    if key not in _SUBJECTS:
        _SUBJECTS[key] = Subject(family.name, family.path, Implementation(impl_name))
    return _SUBJECTS[key]


def run_task(impl_name: str, task: Task) -> TaskResult:
    """Checks one chunk; a divergence is minimized here, in the worker, before it is sent back."""
    subject = _subject(impl_name, task.family)
    result = TaskResult(task.family.name, task.component, len(task.cases))
    try:
        by_special: dict[bool, list[str]] = {}
        for case in task.cases:
            if (case.component, case.property) == ("tokenizer", "encode"):
                by_special.setdefault(case.input.get("add_special_tokens", False), []).append(case.input["text"])
        for special, texts in by_special.items():
            subject.oracle.prefetch_encode(texts, special)
        for case in task.cases:
            found = run_check(subject, case)
            if found is not None:
                result.divergences.append(minimize(subject, found))
    except Exception as exc:  # an oracle or harness failure on this family: report it, keep going
        result.error = f"{type(exc).__name__}: {exc}"
    return result


def chunks(family: Family, component: str, cases: Iterable[Case]) -> list[Task]:
    tasks, batch = [], []
    for case in cases:
        batch.append(case)
        if len(batch) == CHUNK:
            tasks.append(Task(family, component, batch))
            batch = []
    if batch:
        tasks.append(Task(family, component, batch))
    return tasks


class Progress:
    """A progress bar on a terminal; a plain line per family and component in CI logs."""

    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.live = sys.stderr.isatty() and not os.environ.get("CI")
        self.bar = None
        if self.live:
            from rich.progress import Progress as RichProgress
            self.bar = RichProgress(transient=True)
            self.bar.start()
            self.task_id = self.bar.add_task("checking", total=total)

    def advance(self, result: TaskResult) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task_id, advance=1,
                            description=f"{result.family}/{result.component}")
        else:
            print(f"[{self.done}/{self.total}] {result.family} {result.component}: {result.cases} cases, "
                  f"{len(result.divergences)} divergences" + (f", ERROR {result.error}" if result.error else ""),
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(impl: Implementation, families: list[Family], components: list[str], budget: Budget, seed: int,
        jobs: int, recorder: Recorder, baseline: list[BaselineEntry],
        case_source: Callable[[Family, str, Budget, int], Iterable[Case]]) -> dict:
    tasks: list[Task] = []
    checked: set[tuple[str, str]] = set()
    for family in families:
        for component in components:
            if not impl.provides(component):
                recorder.notes.append(f"{component} on {family.name}: not provided by {impl.name} "
                                      f"(missing {', '.join(impl.missing(component))})")
                continue
            family_tasks = chunks(family, component, case_source(family, component, budget, seed))
            if family_tasks:
                checked.add((family.name, component))
            tasks.extend(family_tasks)
    found: list[Divergence] = []
    progress = Progress(len(tasks))
    started = time.monotonic()
    try:
        results = _execute(impl.name, tasks, jobs)
        for result in results:
            recorder.count_cases(result.family, result.component, result.cases)
            if result.error:
                recorder.notes.append(f"{result.component} on {result.family}: harness error {result.error}")
            for divergence in result.divergences:
                if recorder.record(divergence):
                    found.append(divergence)
            progress.advance(result)
    finally:
        progress.close()
        verdict = judge(baseline, found, checked)
        verdict["seconds"] = round(time.monotonic() - started, 1)
        verdict["errors"] = [n for n in recorder.notes if "harness error" in n]
        recorder.write_summary(verdict)
        recorder.close()
    return verdict


def _execute(impl_name: str, tasks: list[Task], jobs: int) -> Iterable[TaskResult]:
    if jobs <= 1:
        for task in tasks:
            yield run_task(impl_name, task)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_task, impl_name, task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()
