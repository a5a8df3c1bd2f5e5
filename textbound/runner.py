"""The run behind ``textbound check``: cases for every family and component, checked, minimized,
recorded, and judged against the baseline.

Cases are generated lazily, cut into chunks and checked by worker processes (``textbound.pool``),
which survive an implementation that hangs, crashes or runs out of memory. ``--shard K/N`` checks
one of N deterministic parts of the chunks; SIGTERM stops a run as Ctrl-C does, and either way
summary.json and the reports are written from what was checked, saying the run did not complete.
"""
from __future__ import annotations

import signal
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .baseline import BaselineEntry, judge
from .budget import Budget
from .divergence import Case, Divergence
from .implementation import Implementation
from .pool import Found, Limits, Pool, Stuck, Task, minimize_stuck, recheck_alone
from .progress import Progress
from .report import Recorder
from .families import Family

CHUNK = 1500  # cases per task: large enough to amortize a batch oracle call, small enough to spread
# Smaller tasks for components whose cases take milliseconds to seconds each, so that one family's
# cases spread over the workers too (its 351 structured cases were one task: ~45 s on one worker).
COMPONENT_CHUNK = {"chat": 150, "tools": 400, "structured": 30}


@dataclass(frozen=True)
class Shard:
    """``--shard K/N``: this run checks the K-th of N deterministic parts of the chunks.

    Chunk ``i`` of a family × component belongs to part ``(i + crc32("family/component")) % N``,
    so every part gets chunks of every large component and small components spread over parts.
    """

    index: int  # 1-based, as written
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``Shard.parse("2/3") == Shard(2, 3)``."""
        try:
            index, count = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"--shard {text!r}: expected K/N, such as 1/4") from None
        if not 1 <= index <= count:
            raise ValueError(f"--shard {text!r}: K must be between 1 and N")
        return cls(index, count)

    def owns(self, family: str, component: str, chunk_index: int) -> bool:
        offset = zlib.crc32(f"{family}/{component}".encode("utf-8"))
        return (chunk_index + offset) % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def chunks(family: Family, component: str, cases: Iterable[Case]) -> Iterator[Task]:
    size = min(CHUNK, COMPONENT_CHUNK.get(component, CHUNK))
    batch: list[Case] = []
    for case in cases:
        batch.append(case)
        if len(batch) == size:
            yield Task(family, component, batch)
            batch = []
    if batch:
        yield Task(family, component, batch)


def provided_cases(impl: Implementation, recorder: Recorder, cases: Iterable[Case]) -> Iterator[Case]:
    """The cases whose property ``impl`` provides the names for; each property it does not (chat ids
    without a Tokenizer) is noted once per family × component × property, and never counted as checked."""
    noted: set[tuple[str, str, str]] = set()
    for case in cases:
        missing = impl.missing_for(case.component, case.property)
        if not missing:
            yield case
        elif (key := (case.family, case.component, case.property)) not in noted:
            noted.add(key)
            recorder.skip(*key[:2], f"not provided by {impl.name} (missing {', '.join(missing)})", case.property)


# -- the run ---------------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (Ctrl-C is SIGINT); the report says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def _sigterm_interrupts():
    """SIGTERM (a CI job cancelled, a `timeout`) stops the run as Ctrl-C does, so the report is written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass
class Group:
    """Progress of one family × component."""

    cases: int = 0
    divergences: int = 0
    outstanding: int = 0  # tasks handed out and not finished
    generated: bool = False  # every task of it has been handed out


def run(impl: Implementation, families: list[Family], components: list[str], budget: Budget, seed: int,
        jobs: int, recorder: Recorder, baseline: list[BaselineEntry],
        case_source: Callable[[Family, str, Budget, int], Iterable[Case]],
        limits: Limits = Limits(), shard: Shard | None = None, progress: Progress | None = None) -> dict:
    checked: set[tuple[str, str]] = set()
    groups: dict[tuple[str, str], Group] = defaultdict(Group)
    progress = progress or Progress()
    pool = Pool(impl.name, jobs, limits, on_tick=progress.tick)

    def finish_if_done(key: tuple[str, str]) -> None:
        group = groups[key]
        if group.generated and group.outstanding == 0 and key in checked:
            note = f"abandoned after {pool.max_stuck} timed-out or crashed cases" if pool.abandoned(key) else ""
            progress.finished(*key, group.cases, group.divergences, note)

    def tasks() -> Iterator[Task]:
        # Generated as the workers consume them, so checking starts at once and memory stays flat.
        for family in families:
            for component in components:
                key = (family.name, component)
                if not impl.provides(component):
                    recorder.skip(family.name, component, f"not provided by {impl.name} "
                                                          f"(missing {', '.join(impl.missing(component))})")
                    continue
                cases = provided_cases(impl, recorder, case_source(family, component, budget, seed))
                for index, task in enumerate(chunks(family, component, cases)):
                    if pool.abandoned(key):
                        break
                    if shard is None or shard.owns(family.name, component, index):
                        checked.add(key)
                        groups[key].outstanding += 1
                        progress.current = f"{family.name} {component}"
                        yield task
                groups[key].generated = True
                finish_if_done(key)

    found: list[Divergence] = []
    stuck: list[Divergence] = []
    slowest = {"seconds": 0.0}  # the slowest case checked, to choose --case-timeout by

    def keep(divergence: Divergence) -> None:
        key = (divergence.case.family, divergence.case.component)
        if recorder.record(divergence):
            found.append(divergence)
            if not divergence.is_oracle_disagreement:  # the progress lines count impl's divergences
                groups[key].divergences += 1
                progress.checked(*key, 0, 1)

    started = time.monotonic()
    interrupted = None
    try:
        with _sigterm_interrupts():
            for event in pool.run(tasks()):
                if isinstance(event, Found):
                    keep(event.divergence)
                elif isinstance(event, Stuck):
                    stuck.append(event.divergence)
                else:
                    key = event.task.group
                    recorder.count(*key, event.task.cases[event.start:event.end])
                    groups[key].cases += event.end - event.start
                    progress.checked(*key, event.end - event.start, 0)
                    if event.error:
                        recorder.harness_error(*key, event.error)
                    if event.slowest and event.slowest[0] > slowest["seconds"]:
                        case = event.task.cases[event.slowest[1]]
                        slowest.update(seconds=round(event.slowest[0], 3), family=case.family,
                                       component=case.component, property=case.property)
                    if event.finished:
                        groups[key].outstanding -= 1
                        finish_if_done(key)
            for key in sorted({(d.case.family, d.case.component) for d in stuck}):
                if pool.abandoned(key):
                    recorder.notes.append(f"{key[1]} on {key[0]}: abandoned after {pool.max_stuck} "
                                          "timed-out or crashed cases; the rest was not checked")
            _minimize_stuck(pool, families, stuck, keep)
    except KeyboardInterrupt as exc:
        interrupted = str(exc) if isinstance(exc, Interrupted) else "SIGINT"
        raise
    except BaseException as exc:
        interrupted = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        for divergence in pool.close() + stuck:  # what was found and not yet recorded or minimized
            keep(divergence)
        progress.close()
        verdict = judge(baseline, found, checked)
        verdict["seconds"] = round(time.monotonic() - started, 1)
        verdict["errors"] = [n for n in recorder.notes if "harness error" in n]
        verdict["slowest_case"] = slowest
        recorder.write_summary(verdict, completed=interrupted is None, interrupted=interrupted,
                               checked=checked, shard=str(shard) if shard else None,
                               limits={"case_timeout": limits.case_timeout, "max_memory_mb": limits.max_memory_mb})
        recorder.close()
    return verdict


def _minimize_stuck(pool: Pool, families: list[Family], stuck: list[Divergence],
                    keep: Callable[[Divergence], None]) -> None:
    """Checks every timed-out or crashed case again alone, and minimizes the first of each signature
    and family that hangs or crashes alone too (each costs up to ``minimize_timeout``)."""
    by_name = {f.name: f for f in families}
    minimized: set[tuple[str, str]] = set()
    while stuck:
        divergence, family = stuck[0], by_name[stuck[0].case.family]
        if recheck_alone(pool, family, divergence) and (key := (family.name, divergence.signature)) not in minimized:
            minimized.add(key)
            divergence = minimize_stuck(pool, family, divergence)
        keep(divergence)
        stuck.pop(0)
