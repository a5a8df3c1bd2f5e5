"""The run behind ``textbound check``: cases for every family and component, checked, minimized,
recorded, and judged against the baseline.

Work is cut into chunks of cases; with ``--jobs N`` the chunks run in N worker processes, each of
which loads a family's tokenizers once and keeps them.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from dataclasses import dataclass, field

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
        for case in task.cases:
            found = run_check(subject, case)
            if found is not None:
                result.divergences.append(minimize(subject, found))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - tokenizers' Rust panics are BaseExceptions
        # An oracle or harness failure on this family: report it and go on with the rest.
        result.error = f"{type(exc).__name__}: {exc}"
    return result


def chunks(family: Family, component: str, cases: Iterable[Case]) -> Iterator[Task]:
    batch: list[Case] = []
    for case in cases:
        batch.append(case)
        if len(batch) == CHUNK:
            yield Task(family, component, batch)
            batch = []
    if batch:
        yield Task(family, component, batch)


class Progress:
    """A progress bar on a terminal; a plain line per family and component in CI logs."""

    def __init__(self):
        self.done = 0
        self.bar = None
        if sys.stderr.isatty() and not os.environ.get("CI"):
            from rich.progress import Progress as RichProgress
            self.bar = RichProgress(transient=True)
            self.bar.start()
            self.task_id = self.bar.add_task("checking", total=None)

    def advance(self, result: TaskResult) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task_id, advance=1,
                            description=f"{result.family}/{result.component}")
        else:
            print(f"[{self.done}] {result.family} {result.component}: {result.cases} cases, "
                  f"{len(result.divergences)} divergences" + (f", ERROR {result.error}" if result.error else ""),
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(impl: Implementation, families: list[Family], components: list[str], budget: Budget, seed: int,
        jobs: int, recorder: Recorder, baseline: list[BaselineEntry],
        case_source: Callable[[Family, str, Budget, int], Iterable[Case]]) -> dict:
    checked: set[tuple[str, str]] = set()

    def tasks() -> Iterator[Task]:
        # Generated as the workers consume them, so checking starts at once and memory stays flat.
        for family in families:
            for component in components:
                if not impl.provides(component):
                    recorder.notes.append(f"{component} on {family.name}: not provided by {impl.name} "
                                          f"(missing {', '.join(impl.missing(component))})")
                    continue
                for task in chunks(family, component, case_source(family, component, budget, seed)):
                    checked.add((family.name, component))
                    yield task

    found: list[Divergence] = []
    progress = Progress()
    started = time.monotonic()
    try:
        for result in _execute(impl.name, tasks(), jobs):
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


def _execute(impl_name: str, tasks: Iterator[Task], jobs: int) -> Iterator[TaskResult]:
    if jobs <= 1:
        for task in tasks:
            yield run_task(impl_name, task)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: set = set()
        for task in tasks:
            pending.add(pool.submit(run_task, impl_name, task))
            if len(pending) >= 2 * jobs:  # keep every worker busy without queueing the whole run
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from (future.result() for future in done)
        for future in as_completed(pending):
            yield future.result()
