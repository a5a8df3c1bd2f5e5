"""The run behind ``textbound check``: cases for every family and component, checked, minimized,
recorded, and judged against the baseline.

Cases are generated lazily, cut into chunks and checked by worker processes (``textbound.run.pool``),
which survive an implementation that hangs, crashes or runs out of memory. ``--shard K/N`` checks
one of N deterministic parts of the chunks; SIGTERM stops a run as Ctrl-C does, and either way
summary.json and the reports are written from what was checked, saying the run did not complete.
"""
from __future__ import annotations

import functools
import hashlib
import json
import signal
import threading
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..families import Family
from ..naming.baseline import BaselineEntry, Verdict, judge
from ..naming.divergence import Case, Divergence
from ..naming.root_causes import Evidence, root_causes
from ..plan.budget import Budget
from ..plan.implementation import LIBRARY, SERVER, Implementation
from ..records.report import Recorder
from .pool import (
    Checked,
    Found,
    Limits,
    Pool,
    Stuck,
    Task,
    judged_stuck,
    retry_limits,
)
from .progress import Progress

CHUNK = 1500  # cases per task: large enough to amortize a batch oracle call, small enough to spread
# Smaller tasks for components whose cases take milliseconds to seconds each, so that one family's
# cases spread over the workers too: a family's few hundred structured cases in one task would keep
# one worker busy for most of a minute while the others wait.
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
    lacking: dict[tuple[str, str], list[str]] = {}  # (component, property) -> its names impl lacks
    for case in cases:
        if (missing := lacking.get((case.component, case.property))) is None:
            missing = lacking[case.component, case.property] = impl.missing_for(case.component, case.property)
        if not missing:
            yield case
        elif (key := (case.family, case.component, case.property)) not in noted:
            noted.add(key)
            recorder.skip(*key[:2], f"not provided by {impl.name} (missing {', '.join(missing)})", case.property)


def installed_cases(recorder: Recorder, cases: Iterable[Case]) -> Iterator[Case]:
    """The cases whose property's oracle libraries are installed (``checks.missing_oracles``). A
    property needing one that is not is skipped on the family and noted once a run, with the extra
    that installs it, never counted as checked; a second opinion that cannot be asked is noted once."""
    from ..checks import missing_oracles
    missing = {}
    for case in cases:
        key = (case.component, case.property)
        if key not in missing:
            missing[key] = lack = missing_oracles(*key)
            if lack.needed:
                recorder.not_installed(case.family, *key, lack.needed)
            if lack.consulted:
                recorder.not_consulted(*key, lack.consulted)
        if not missing[key].needed:
            yield case


class SharedCases:
    """The inputs of family-independent properties (``checks.FAMILY_INDEPENDENT``: a schema's regex, a
    tool-call parse) handed out so far in a run: the same input on a later family gets the same
    answer, so it is checked once, on the first family that has it, and each repeat is counted here
    for the report's note instead of being checked again.

        >>> shared = SharedCases()
        >>> [len(list(shared.first_seen(cases))) for cases in (bert_sound_cases, gpt2_sound_cases)]
        [90, 30]        # gpt2's 60 corpus schemas were bert's too
    """

    def __init__(self):
        from ..checks import FAMILY_INDEPENDENT
        self.properties = frozenset(FAMILY_INDEPENDENT)
        self.seen: dict[bytes, str] = {}  # digest of (component, property, input) -> the family checking it
        self.repeats: Counter[tuple[str, str]] = Counter()  # (component, property) -> cases not checked again
        self.repeating: defaultdict[tuple[str, str], set[str]] = defaultdict(set)  # -> families they were on

    def first_seen(self, cases: Iterable[Case]) -> Iterator[Case]:
        for case in cases:
            key = (case.component, case.property)
            if key not in self.properties:
                yield case
                continue
            # Key order kept: a schema's properties are written in its order, so it is part of the input.
            digest = hashlib.blake2b(json.dumps([*key, case.input], ensure_ascii=False).encode("utf-8"),
                                     digest_size=16).digest()
            if self.seen.setdefault(digest, case.family) == case.family:
                yield case
            else:
                self.repeats[key] += 1
                self.repeating[key].add(case.family)

    def notes(self) -> list[str]:
        """One line for every property with repeats: how many cases, on how many families, checked once.

        >>> shared = SharedCases(); shared.repeats[("tools", "whole")] = 3; shared.repeating[("tools", "whole")] = {"a"}
        >>> shared.notes()  # doctest: +ELLIPSIS
        ['inputs an earlier family of the run had too, checked once ...: tools/whole 3 cases on 1 family']
        """
        if not self.repeats:
            return []
        counts = []
        for (component, prop), count in sorted(self.repeats.items()):
            families = len(self.repeating[(component, prop)])
            counts.append(f"{component}/{prop} {count:,} {'case' if count == 1 else 'cases'} on {families} "
                          f"{'family' if families == 1 else 'families'}")
        return ["inputs an earlier family of the run had too, checked once and counted on the family that "
                "checked them (these properties do not depend on the family): " + "; ".join(counts)]


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


@dataclass(frozen=True)
class Plan:
    """What one run checks and against what: the cases the budget and seed generate for every
    family × component (the shard's part of them), checked on ``impl`` and judged against
    ``baseline``. Two runs of one plan check the same cases and reach the same verdict, whatever
    their machinery; summary.json's header records the plan (impl, families, budget, seed, shard),
    and ``textbound merge`` takes only shards whose headers agree.

    How the cases are checked is not the plan's but the run's machinery (``run``'s keywords): the
    worker processes (``jobs``) only change how fast the same cases are checked; their ``limits``
    are a guard of the machinery against an implementation that hangs or eats memory; the recorder,
    the progress lines and the case source are where the run writes, shows and draws from.

        >>> plan = Plan(Implementation("textbound.impl"), resolve(["gpt2"], [], []), ["tokenizer"], BUDGETS["quick"])
        >>> run(plan, Recorder(report_dir, info)).new
        []
    """

    impl: Implementation
    families: tuple[Family, ...]
    components: tuple[str, ...]
    budget: Budget
    seed: int = 0
    shard: Shard | None = None
    baseline: tuple[BaselineEntry, ...] = ()
    properties: tuple[str, ...] = ()  # ``--property``: the "component/property" names checked; () for all

    def __post_init__(self):
        for name in ("families", "components", "baseline", "properties"):  # a frozen plan holds no list to change
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def selects(self, case: Case) -> bool:
        """Whether the run checks ``case``: every case of its components, unless ``properties`` names some."""
        return not self.properties or f"{case.component}/{case.property}" in self.properties

    def checks_whole(self, component: str) -> bool:
        """Whether every property of ``component`` is checked, so a baseline entry of it that matched
        nothing is fixed (a run of ``--property stops/stream`` cannot tell of stops/pipeline's)."""
        from ..checks import CHECKS
        return all(f"{c}/{p}" in self.properties for c, p in CHECKS if c == component) if self.properties else True


CaseSource = Callable[[Family, str, Budget, int], Iterable[Case]]


@dataclass
class Group:
    """Progress of one family × component."""

    cases: int = 0
    divergences: int = 0
    outstanding: int = 0  # tasks handed out and not finished
    generated: bool = False  # every task of it has been handed out


class Schedule:
    """The plan's cases as tasks for the pool, and what comes back: each family × component's
    progress, the divergences kept (recorded once), and the timed-out or crashed cases, minimized
    once the rest is checked."""

    def __init__(self, plan: Plan, pool: Pool, recorder: Recorder, progress: Progress, case_source: CaseSource):
        self.plan, self.pool, self.recorder, self.progress = plan, pool, recorder, progress
        self.case_source = case_source
        self.checked: set[tuple[str, str]] = set()
        self.groups: dict[tuple[str, str], Group] = defaultdict(Group)
        self.found: list[Divergence] = []
        self.stuck: list[Divergence] = []
        self.slowest: dict = {"seconds": 0.0}  # the slowest case checked, to choose --case-timeout by
        self.shared = SharedCases()
        self.built: set[str] = set()  # "component/property" of each case handed out

    def tasks(self) -> Iterator[Task]:
        """Generated as the workers consume them, so checking starts at once and memory stays flat."""
        plan, impl = self.plan, self.plan.impl
        for family in plan.families:
            for component in plan.components:
                key = (family.name, component)
                if not impl.provides(component):
                    self.recorder.skip(family.name, component, f"not provided by {impl.name} "
                                                               f"(missing {', '.join(impl.missing(component))})")
                    continue
                selected = self.selected(self.case_source(family, component, plan.budget, plan.seed))
                cases = self.shared.first_seen(installed_cases(self.recorder, provided_cases(impl, self.recorder, selected)))
                for index, task in enumerate(chunks(family, component, cases)):
                    if self.pool.abandoned(key):
                        break
                    if plan.shard is None or plan.shard.owns(family.name, component, index):
                        self.groups[key].outstanding += 1
                        self.progress.current = f"{family.name} {component}"
                        yield task
                self.groups[key].generated = True
                self._finish_if_done(key)

    def selected(self, cases: Iterable[Case]) -> Iterator[Case]:
        """The cases of the plan's properties, each property built noted (``unbuilt_notes``)."""
        for case in cases:
            if self.plan.selects(case):
                self.built.add(f"{case.component}/{case.property}")
                yield case

    def unbuilt_notes(self) -> list[str]:
        """A line for each property ``--property`` selects of which no case was built on any family."""
        return [f"{name}: selected by --property, but no case of it was built on these families for "
                f"{self.plan.impl.name}" + (" (a server's properties are built for --server only)" if "server" in name else "")
                for name in self.plan.properties if name not in self.built]

    def take(self, event: Checked | Found | Stuck) -> None:
        """One event of the pool: a divergence found, a case stuck, or cases checked."""
        if isinstance(event, Found):
            self.keep(event.divergence)
        elif isinstance(event, Stuck):
            self.stuck.append(event.divergence)
        else:
            key = event.task.group
            self.checked.add(key)  # when its cases come back: an interrupted run lists no group only handed out
            self.recorder.count(*key, event.task.cases[event.start:event.end])
            self.groups[key].cases += event.end - event.start
            self.progress.checked(*key, event.end - event.start, 0)
            if event.error:
                self.recorder.harness_error(*key, event.error)
            if event.slowest and event.slowest[0] > self.slowest["seconds"]:
                case = event.task.cases[event.slowest[1]]
                self.slowest.update(seconds=round(event.slowest[0], 3), family=case.family,
                                    component=case.component, property=case.property)
            if event.finished:
                self.groups[key].outstanding -= 1
                self._finish_if_done(key)

    def keep(self, divergence: Divergence) -> None:
        key = (divergence.case.family, divergence.case.component)
        if self.recorder.record(divergence):
            self.found.append(divergence)
            if not divergence.is_oracle_disagreement:  # the progress lines count impl's divergences
                self.groups[key].divergences += 1
                self.progress.checked(*key, 0, 1)

    def _finish_if_done(self, key: tuple[str, str]) -> None:
        group = self.groups[key]
        if group.generated and group.outstanding == 0 and key in self.checked:
            abandoned = self.pool.abandoned(key)
            note = f"abandoned after {self.pool.max_stuck} timed-out or crashed cases" if abandoned else ""
            self.progress.finished(*key, group.cases, group.divergences, note)

    def minimize_stuck(self) -> None:
        """Records each family × component abandoned as a harness error (its other cases were not
        checked: the run fails, whoever hung), then checks every timed-out or crashed case again
        alone: one that hangs or crashes alone too is the oracle's failure when it does so without impl
        as well, else the first of each signature and family is minimized (each costs up to
        ``minimize_timeout``)."""
        for key in sorted({(d.case.family, d.case.component) for d in self.stuck}):
            if self.pool.abandoned(key):
                self.recorder.harness_error(*key, f"abandoned after {self.pool.max_stuck} timed-out or crashed "
                                                  "cases; the rest was not checked")
        by_name = {f.name: f for f in self.plan.families}
        self.pool.retry = retry_limits(self.pool.limits, self.slowest["seconds"])
        minimized: set[tuple[str, str]] = set()
        while self.stuck:
            self.keep(judged_stuck(self.pool, by_name[self.stuck[0].case.family], self.stuck[0], minimized))
            self.stuck.pop(0)

    def keep_unfinished(self) -> None:
        """What was found and not yet recorded or minimized when the run stops. (The divergences
        recorded as found, not minimized, are counted in the report from their records.)"""
        for divergence in self.pool.close() + self.stuck:
            self.keep(divergence)
        self.recorder.notes.extend(self.shared.notes())


def root_cause_evidence(plan: Plan, records: list[dict], limits: Limits, progress: Progress) -> dict[str, Evidence]:
    """What re-running each signature's smallest example shows (textbound.run.evidence), for
    grouping signatures into root causes; none for a server, whose checks stream over its wire."""
    from .evidence import gather, rerun_examples

    examples = rerun_examples(records)
    if plan.impl.source != LIBRARY or not examples:
        return {}
    progress.note(f"re-running the smallest example of {len(examples)} signature(s) to group them into root causes")
    return gather(plan.impl.name, {family.name: str(family.path) for family in plan.families}, records,
                  limits.minimize_timeout, limits.max_memory_mb)


def _steering_notes(impl: Implementation) -> list[str]:
    """A server's run notes that its output side ran unsteered, where the server honours no steering."""
    if impl.source != SERVER:
        return []
    from ..checks.server_output import steering_note
    note = steering_note(impl.server_dialect)
    return [note] if note else []


def run(plan: Plan, recorder: Recorder, *, jobs: int = 1, limits: Limits = Limits(),
        case_source: CaseSource | None = None, progress: Progress | None = None) -> Verdict:
    """Checks ``plan`` with ``jobs`` worker processes under ``limits``, records into ``recorder``
    and writes the reports, also when interrupted; returns the verdict. ``case_source`` defaults
    to the checks' case builders, ``progress`` to lines on stderr."""
    if case_source is None:  # the builders of the implementation's source: impl's names, or a server's wire
        from ..checks import case_source as every_case
        case_source = functools.partial(every_case, source=plan.impl.source)
    progress = progress or Progress()
    pool = Pool(plan.impl.name, jobs, limits, on_tick=progress.tick)
    schedule = Schedule(plan, pool, recorder, progress, case_source)
    started = time.monotonic()
    interrupted = None
    try:
        with _sigterm_interrupts():
            for event in pool.run(schedule.tasks()):
                schedule.take(event)
            schedule.minimize_stuck()
    except KeyboardInterrupt as exc:
        interrupted = str(exc) if isinstance(exc, Interrupted) else "SIGINT"
        raise
    except BaseException as exc:
        interrupted = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        schedule.keep_unfinished()
        if interrupted is None:
            recorder.notes.extend(schedule.unbuilt_notes())
            recorder.notes.extend(_steering_notes(plan.impl))
        evidence, stopped = {}, None
        if interrupted is None:  # a run stopped before its end is reported as it stands, at once
            try:
                with _sigterm_interrupts():
                    evidence = root_cause_evidence(plan, recorder.records, limits, progress)
            except KeyboardInterrupt as exc:
                interrupted, stopped = (str(exc) if isinstance(exc, Interrupted) else "SIGINT"), exc
        progress.close()
        causes = root_causes(recorder.records, evidence)
        # An incomplete run may not have reached an entry's divergence: it calls no entry fixed.
        reached = {key for key in schedule.checked if plan.checks_whole(key[1])} if interrupted is None else set()
        verdict = replace(judge(list(plan.baseline), schedule.found, reached,
                                [error.note for error in recorder.harness_errors], causes),
                          seconds=round(time.monotonic() - started, 1), slowest_case=schedule.slowest)
        recorder.write_summary(verdict, completed=interrupted is None, interrupted=interrupted,
                               checked=schedule.checked, shard=str(plan.shard) if plan.shard else None,
                               limits={"case_timeout": limits.case_timeout, "max_memory_mb": limits.max_memory_mb},
                               evidence=evidence)
        recorder.close()
        if stopped is not None:
            raise stopped
    return verdict
