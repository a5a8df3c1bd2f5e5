"""Worker processes that survive the implementation under test: timeouts, crashes, memory limits.

Every chunk of cases runs in a worker process, also with ``--jobs 1``: the implementation may hang,
crash or eat all memory, and only a separate process can be killed and replaced without losing the
run. Each worker writes which case it is checking, and since when, into memory it shares with the
parent, so the parent needs no message per case:

- a case running longer than ``--case-timeout`` gets its worker killed; the case is recorded as a
  divergence of kind "timed out";
- a worker that dies (a segfault, ``os._exit``, the kernel's OOM killer) is recorded as "crashed
  (SIGSEGV)" (or "crashed (exit 3)") on the case it was running;
- ``--max-memory`` caps each worker's data size (RLIMIT_DATA), so a runaway allocation fails:
  "out of memory" when Python sees a MemoryError, "crashed" when native code aborts on it.

Either way a fresh worker replaces the dead one and checks the rest of the chunk; after
``MAX_STUCK_PER_GROUP`` such cases a family × component is abandoned. ``recheck_alone`` checks a
timed-out or crashed case again alone in a fresh process, and ``minimize_stuck`` shrinks it there,
every try bounded.

Each worker has up to ``JOBS_IN_FLIGHT`` chunks sent to it, so it goes on checking while the parent
generates the next chunk; a thread in the worker receives them, so the parent never blocks on a
full pipe.

``check_job`` is also what checks cases without a worker (the pytest plugin, one property per test
item): there no parent watches the clock, so each case runs under ``time_limit`` (SIGALRM) and each
minimizing under the minimizing limit, and ``judged_stuck`` settles a case that timed out in a
worker of its own, as the run settles its stuck cases.
"""
from __future__ import annotations

import importlib
import itertools
import multiprocessing
import os
import queue
import resource
import signal
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from multiprocessing.connection import wait

from ..families import Family
from ..naming.divergence import NOT_MINIMIZED, ORACLE_FAILURE, Case, Divergence
from ..plan.implementation import FamilyUnloadable, Implementation
from .time_limit import NoAnswer, time_limit

# Seconds. The slowest case seen in a default run took 13.9 s (a chat template rendered on a machine
# loaded seven times over); report.md names each run's slowest case.
DEFAULT_CASE_TIMEOUT = 30.0
MINIMIZE_TIMEOUT_FACTOR = 10  # loading a family, or minimizing a divergence, may take this many
MAX_STUCK_PER_GROUP = 5  # timed-out or crashed cases after which a family × component is abandoned
# A timed-out case is checked again and minimized under a limit of its own: ten times the slowest
# case answered, at least a second (an engine that hangs would cost the full case timeout per try),
# every try within MINIMIZE_TRIES such limits.
RETRY_FACTOR, MIN_RETRY_SECONDS, MINIMIZE_TRIES = 10, 1.0, 30
JOBS_IN_FLIGHT = 2  # chunks sent to a worker ahead: it never waits for the parent to generate one
POLL_SECONDS = 0.2  # how often the parent looks at its workers' clocks
TIMED_OUT = "timed out"
OUT_OF_MEMORY = "out of memory"
SILENT_IMPL = "textbound.run.silent_impl"  # answers nothing at once: what hangs with it is not impl's doing
SILENT_PROBES = 2  # an oracle that hangs does so every time; a worker the machine starves, seldom twice
# A bug that shows on thousands of cases is shown as well by its first few examples minimized: a
# worker minimizes the first MINIMIZED_PER_SIGNATURE of a family × signature in each chunk, for at
# most MINIMIZING_SECONDS_PER_SIGNATURE, and records the rest as found, marked NOT_MINIMIZED. Per
# chunk, so that which ones are minimized is the same whatever --jobs and --shard.
MINIMIZED_PER_SIGNATURE = 3
MINIMIZING_SECONDS_PER_SIGNATURE = 60.0
UNLOADABLE = "unloadable"  # a worker's message that the implementation cannot load a family: the run stops


@dataclass(frozen=True)
class Limits:
    """What a worker may spend on one case (``--case-timeout``) and in all (``--max-memory``)."""

    case_timeout: float = DEFAULT_CASE_TIMEOUT
    max_memory_mb: int | None = None
    load_timeout: float | None = None  # loading a family; None: minimize_timeout

    @property
    def minimize_timeout(self) -> float:
        return self.case_timeout * MINIMIZE_TIMEOUT_FACTOR


def retry_limits(limits: Limits, slowest_answered: float) -> Limits:
    """What checking a timed-out case again, and each try minimizing it, may take: ten times the
    slowest case answered, at least a second, at most the case timeout; loading keeps the run's limit.
    ``retry_limits(Limits(case_timeout=30.0), 0.05).case_timeout == 1.0``."""
    per_try = min(limits.case_timeout, max(MIN_RETRY_SECONDS, RETRY_FACTOR * slowest_answered))
    return replace(limits, case_timeout=per_try, load_timeout=limits.minimize_timeout)


@dataclass
class Task:
    """A chunk of cases of one family and component."""

    family: Family
    component: str
    cases: list[Case]

    @property
    def group(self) -> tuple[str, str]:
        return self.family.name, self.component

    def __reduce__(self):
        # Cases travel to a worker as tuples: pickling dataclass instances costs three times as much
        # (66 against 22 microseconds a tokenizer case, rebuilding included), paid by the parent.
        fields = [(c.component, c.property, c.family, c.input) for c in self.cases]
        return _rebuilt_task, (self.family, self.component, fields)


def _rebuilt_task(family: Family, component: str, fields: list[tuple]) -> Task:
    return Task(family, component, [Case(*f) for f in fields])


# What a worker writes into the slots it shares with its parent: which job, which case of it,
# doing what, since when.
JOB, INDEX, PHASE, STARTED = range(4)
IDLE, LOADING, CHECKING, MINIMIZING = 0.0, 1.0, 2.0, 3.0


def _worker_main(impl_name: str, conn, slot, max_memory_mb: int | None) -> None:
    """Runs jobs ``(number, task, first_index, minimize)`` sent by the parent until it sends None.

    Sends ("found", i, divergence) before minimizing case i, ("divergence", i, divergence) after,
    and ("done", end_index, error, (seconds, i) of its slowest case) at the end of each job; or
    (UNLOADABLE, why) and ends, when the implementation cannot load the job's family.
    """
    from ..checks import Subject  # imported where used: `textbound triage` needs no oracle

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    inbox: queue.Queue = queue.Queue()

    def receive() -> None:
        try:
            while True:
                inbox.put(conn.recv())
        except EOFError:  # the parent is gone
            inbox.put(None)
        except BaseException:  # noqa: BLE001 - a MemoryError under --max-memory: a crash, not a worker idle forever
            os._exit(1)

    threading.Thread(target=receive, daemon=True).start()  # before the limit: starting a thread takes memory
    if max_memory_mb:
        limit = max_memory_mb * 2 ** 20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    impl = Implementation(impl_name)
    subjects: dict = {}
    while (job := inbox.get()) is not None:
        number, task, first, minimizing = job
        slot[JOB], slot[INDEX] = number, first
        slot[PHASE], slot[STARTED] = LOADING, time.monotonic()
        if (key := str(task.family.path)) not in subjects:
            slot[PHASE], slot[STARTED] = LOADING, time.monotonic()
            subjects[key] = loaded(Subject(task.family.name, task.family.path, impl,
                                           outside_case_clock=partial(loading_phase, slot)))
        try:
            if impl.loads_families(task.component):
                subjects[key].load_tokenizer()
        except FamilyUnloadable as exc:  # the run is not set up: the parent stops it
            conn.send((UNLOADABLE, str(exc)))
            return
        conn.send(("done", *check_job(subjects[key], task, JobRun(first, minimizing, slot, conn.send))))


class LimitError(Exception):
    """A limit no worker can run under."""


def data_size_mb() -> int | None:
    """This process's data size in MB as RLIMIT_DATA counts it (VmData), or None where /proc does
    not say: a worker forked from it starts at that size, so no --max-memory below it can hold one."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            kilobytes = next(int(line.split()[1]) for line in status if line.startswith("VmData:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return -(-kilobytes // 1024)


def refuse_unusable(limits: Limits) -> None:
    """Raises LimitError when a worker forked now could not start under ``limits.max_memory_mb``."""
    if limits.max_memory_mb and (size := data_size_mb()) is not None and limits.max_memory_mb <= size:
        raise LimitError(f"--max-memory {limits.max_memory_mb}: a worker starts at the {size} MB of the process "
                         f"it is forked from, with the families loaded so far: give more than {size}")


@dataclass
class MinimizingAllowance:
    """Which divergences of a chunk a worker still minimizes: the first ``per_signature`` of each
    family × signature, while that signature's minimizing has taken less than ``seconds``.

        >>> allowance = MinimizingAllowance(per_signature=1)
        >>> allowance.grants(divergence), allowance.grants(divergence)   # after the first is minimized
        (True, False)
    """

    per_signature: int = MINIMIZED_PER_SIGNATURE
    seconds: float = MINIMIZING_SECONDS_PER_SIGNATURE
    spent: dict[tuple[str, str], list] = field(default_factory=lambda: defaultdict(lambda: [0, 0.0]))

    def grants(self, divergence: Divergence) -> bool:
        """True (and counted) when ``divergence`` is to be minimized; else it is marked NOT_MINIMIZED."""
        spent = self.spent[(divergence.case.family, divergence.signature)]
        if spent[0] < self.per_signature and spent[1] < self.seconds:
            spent[0] += 1
            return True
        divergence.first_difference["minimization"] = (
            f"{NOT_MINIMIZED}: {spent[0]} of this signature minimized in its chunk already"
            + (f", for {spent[1]:.0f} s" if spent[1] >= self.seconds else ""))
        return False

    def left(self, divergence: Divergence) -> float:
        """Seconds this signature may still spend minimizing."""
        return self.seconds - self.spent[(divergence.case.family, divergence.signature)][1]

    def took(self, divergence: Divergence, seconds: float) -> None:
        self.spent[(divergence.case.family, divergence.signature)][1] += seconds


@dataclass
class JobRun:
    """How a worker checks one job: from case ``first``, minimizing or not, writing its clock into
    ``slot`` and its messages through ``send``. ``limits`` only where no parent watches the clock
    (cases checked in this process): each case and each minimizing is then timed here."""

    first: int
    minimizing: bool
    slot: object  # the RawArray the parent reads (a list of four floats where no parent watches)
    send: Callable[[tuple], None]
    allowance: MinimizingAllowance = field(default_factory=MinimizingAllowance)  # the job's own
    limits: Limits | None = None


def check_job(subject, task: Task, run: JobRun) -> tuple[int, str | None, tuple[float, int]]:
    """Checks ``task.cases[run.first:]`` on ``subject`` as a worker does; returns the index after the
    last case checked, the error that stopped it (or None) and (seconds, index) of its slowest case.

    Sends ("found", i, divergence) before minimizing case i and ("divergence", i, divergence) after;
    with ``run.limits``, a case past the case timeout is sent as ("stuck", i, divergence), and after
    MAX_STUCK_PER_GROUP of them the rest is left, the error saying so.

        >>> check_job(subject, Task(family, "tokenizer", [agreeing_case]), JobRun(0, True, [0.0] * 4, print))
        (1, None, (0.00012, 0))
    """
    slot, send = run.slot, run.send
    index, error, slowest, stuck = run.first, None, (0.0, run.first), 0
    try:
        for index in range(run.first, len(task.cases)):
            slot[INDEX], slot[PHASE], slot[STARTED] = index, CHECKING, time.monotonic()
            found = _checked(subject, task.cases[index], run.limits)
            slowest = max(slowest, (time.monotonic() - slot[STARTED], index))
            if found is None:
                continue
            if found.kind == TIMED_OUT:
                send(("stuck", index, found))
                if (stuck := stuck + 1) == MAX_STUCK_PER_GROUP:
                    error, index = f"abandoned after {stuck} timed-out cases; the rest was not checked", index + 1
                    break
                continue
            # An oracle disagreement is about the references, not impl: not worth minimizing.
            if (run.minimizing and minimized_field(found.case) and not found.is_oracle_disagreement
                    and run.allowance.grants(found)):
                send(("found", index, _memory_named(found)))
                slot[PHASE], slot[STARTED] = MINIMIZING, time.monotonic()
                found = _minimized(subject, found, run)
                run.allowance.took(found, time.monotonic() - slot[STARTED])
            send(("divergence", index, _memory_named(found)))
        else:
            index = len(task.cases)
    except BaseException as exc:  # noqa: BLE001 - tokenizers' Rust panics are BaseExceptions
        # An oracle or harness failure on this family: report it and go on with other chunks.
        error, index = f"{type(exc).__name__}: {exc}", index + 1
    slot[PHASE] = IDLE
    return index, error, slowest


def _checked(subject, case: Case, limits: Limits | None) -> Divergence | None:
    """``run_check`` of ``case``; with ``limits``, under the case timeout, past which the case is a
    TIMED_OUT divergence (whatever the check made of the limit's exception)."""
    from ..checks import run_check

    if limits is None:
        return run_check(subject, case)
    try:
        with time_limit(limits.case_timeout) as limit:
            found = run_check(subject, case)
    except NoAnswer:  # raised outside impl's call (in the oracle): the check did not end
        found = None
    return stuck_divergence(case, TIMED_OUT, limits) if limit.fired else found


def _minimized(subject, found: Divergence, run: JobRun) -> Divergence:
    """``found`` minimized for what the allowance leaves; with ``run.limits``, within the minimizing
    limit, past which ``found`` is kept as it was found (as a worker killed while minimizing keeps it)."""
    from ..shrinking.minimize import minimize

    if run.limits is None:
        return minimize(subject, found, seconds=run.allowance.left(found))
    kept = replace(found, first_difference=dict(found.first_difference))
    try:
        with time_limit(run.limits.minimize_timeout) as limit:
            smallest = minimize(subject, found, seconds=run.allowance.left(found))
    except NoAnswer:
        smallest = None
    if limit.fired or smallest is None:
        kept.first_difference["minimization"] = TIMED_OUT
        return kept
    return smallest


@contextmanager
def loading_phase(slot) -> Iterator[None]:
    """The worker's clock in its loading phase while the body runs (the parent then allows the
    loading limit, not the case timeout), then back in the phase it was in, restarted.

    >>> slot = [0.0, 0.0, CHECKING, 0.0]
    >>> with loading_phase(slot):
    ...     slot[PHASE] == LOADING
    True
    >>> slot[PHASE] == CHECKING
    True
    """
    phase = slot[PHASE]
    slot[PHASE], slot[STARTED] = LOADING, time.monotonic()
    try:
        yield
    finally:
        slot[PHASE], slot[STARTED] = phase, time.monotonic()


def loaded(subject):
    """The subject with the oracle's tokenizer loaded and the oracles' WORKER_SETUP done, outside any
    case's clock (loading a large vocabulary takes seconds, starting an engine a minute); a failure is
    left for the checks to report per case. The implementation's tokenizer is loaded for each job
    that calls it (Subject.load_tokenizer), also outside the clock: a family it cannot load is no
    case's divergence but the run's setup failing."""
    from ..checks.registry import WORKER_SETUP
    try:
        subject.oracle
        for setup in WORKER_SETUP:
            setup()
    except Exception:  # noqa: BLE001 - the checks meet the same error and report it
        pass
    return subject


def _memory_named(divergence: Divergence) -> Divergence:
    """A MemoryError is the --max-memory limit at work: named for what it is (after minimizing,
    which compares the check's own signatures)."""
    return replace(divergence, kind=OUT_OF_MEMORY) if divergence.kind == "raised MemoryError" else divergence


def _death(exitcode: int | None) -> str:
    """How a process ended: ``_death(-11) == "SIGSEGV"``, ``_death(3) == "exit 3"``."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit {exitcode}"


@dataclass
class Job:
    task: Task
    first: int  # index of the first case to check
    minimize: bool = True
    number: int = 0  # given when sent, so the parent knows which job a worker's slots describe
    found: dict[int, Divergence] = field(default_factory=dict)  # not yet minimized, by case index


class Worker:
    """One worker process, and the jobs sent to it (the first is the one it runs)."""

    def __init__(self, context, impl_name: str, limits: Limits):
        refuse_unusable(limits)
        self.conn, child = context.Pipe()
        self.slot = context.RawArray("d", 4)
        self.process = context.Process(target=_worker_main, args=(impl_name, child, self.slot, limits.max_memory_mb),
                                       daemon=True)
        self.process.start()
        child.close()
        self.limits = limits
        self.jobs: deque[Job] = deque()

    def send(self, job: Job) -> None:
        self.jobs.append(job)
        try:
            self.conn.send((job.number, job.task, job.first, job.minimize))
        except OSError:  # it died since its last job: the parent finds it dead and resends
            pass

    def messages(self) -> Iterator[tuple]:
        try:
            while self.conn.poll():
                yield self.conn.recv()
        except (EOFError, OSError):
            return

    def running(self) -> int:
        """The index of the case the first job is at (its first case if the worker has not begun it)."""
        job = self.jobs[0]
        return int(self.slot[INDEX]) if self.slot[JOB] == job.number else job.first

    def overdue(self) -> bool:
        phase = self.slot[PHASE]
        limits = self.limits
        limit = {CHECKING: limits.case_timeout, LOADING: limits.load_timeout or limits.minimize_timeout,
                 MINIMIZING: limits.minimize_timeout}.get(phase)
        return limit is not None and time.monotonic() - self.slot[STARTED] > limit

    def stop(self) -> str:
        """Kills the process (if it still runs) and says why it is stopping."""
        alive = self.process.is_alive()
        self.process.kill()
        self.process.join()
        self.conn.close()
        return TIMED_OUT if alive else f"crashed ({_death(self.process.exitcode)})"


@dataclass
class Checked:
    """Cases ``start:end`` of ``task`` were checked; ``finished`` when nothing of the task is left."""

    task: Task
    start: int
    end: int
    finished: bool
    error: str | None = None
    slowest: tuple[float, int] | None = None  # seconds and index of the slowest case (checked, not minimized)


@dataclass
class Found:
    divergence: Divergence


@dataclass
class Stuck:
    """A case on which the implementation hung or crashed (to be minimized by ``minimize_stuck``)."""

    divergence: Divergence


def stuck_divergence(case: Case, how: str, limits: Limits) -> Divergence:
    """``how`` is TIMED_OUT or "crashed (SIGSEGV)": the kind, so each way of failing is a signature."""
    if how == TIMED_OUT:
        return Divergence(case, "an answer", f"no answer after {limits.case_timeout:g} s", TIMED_OUT,
                          {"case_timeout": limits.case_timeout})
    return Divergence(case, "an answer", f"the worker process checking it ended: {how}", how)


class Pool:
    """``jobs`` worker processes fed chunks of cases, replaced when they hang or die."""

    def __init__(self, impl_name: str, jobs: int, limits: Limits, on_tick: Callable[[], None] = lambda: None):
        importlib.import_module("textbound.checks")  # once here, not in every worker forked from here
        self.context = multiprocessing.get_context("fork")  # workers inherit the parent's loaded modules
        self.impl_name, self.limits, self.on_tick = impl_name, limits, on_tick
        self.numbers = itertools.count(1)
        self.workers = [self._new_worker() for _ in range(max(1, jobs))]
        self.prober: Worker | None = None
        self.stuck_in: dict[tuple[str, str], int] = defaultdict(int)
        self.max_stuck = MAX_STUCK_PER_GROUP
        self.retry = limits  # what probes run under (retry_limits once the run's cases are checked)

    def _new_worker(self, limits: Limits | None = None) -> Worker:
        return Worker(self.context, self.impl_name, limits or self.limits)

    def _send(self, worker: Worker, job: Job) -> None:
        job.number = next(self.numbers)
        worker.send(job)

    def abandoned(self, group: tuple[str, str]) -> bool:
        return self.stuck_in[group] >= self.max_stuck

    def run(self, tasks: Iterator[Task]) -> Iterator[Checked | Found | Stuck]:
        retries: deque[Job] = deque()  # the rest of chunks cut short by a hang or a crash, first
        while True:
            for job in [j for j in retries if self.abandoned(j.task.group)]:
                retries.remove(job)
                yield Checked(job.task, job.first, job.first, finished=True)
            for depth in range(JOBS_IN_FLIGHT):  # one job to every worker before a second to any
                for worker in self.workers:
                    if len(worker.jobs) <= depth:
                        job = retries.popleft() if retries else next((Job(t, 0) for t in tasks), None)
                        if job is None:
                            break
                        if not worker.jobs and not worker.process.is_alive():  # died idle: no case to blame
                            worker.stop()
                            place = self.workers.index(worker)  # before the name is bound to the new one
                            worker = self.workers[place] = self._new_worker()
                        self._send(worker, job)
            busy = [w for w in self.workers if w.jobs]
            if not busy:
                return
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=POLL_SECONDS)
            for worker in busy:
                yield from self._service(worker, retries)
            self.on_tick()

    def _service(self, worker: Worker, retries: deque[Job]) -> Iterator[Checked | Found | Stuck]:
        for message in worker.messages():
            job = worker.jobs[0]
            if message[0] == UNLOADABLE:
                raise FamilyUnloadable(message[1])
            if message[0] == "found":
                job.found[message[1]] = message[2]
            elif message[0] == "divergence":
                job.found.pop(message[1], None)
                yield Found(message[2])
            else:
                worker.jobs.popleft()
                yield Checked(job.task, job.first, message[1], finished=True, error=message[2], slowest=message[3])
        if not worker.jobs or (worker.process.is_alive() and not worker.overdue()):
            return
        job, index = worker.jobs[0], worker.running()
        how = worker.stop()
        self.workers[self.workers.index(worker)] = self._new_worker()
        retries.extendleft(reversed(list(worker.jobs)[1:]))  # sent but not begun: as they were
        if index in job.found:
            # The case diverged, and shrinking it hung or crashed: keep it as it was found.
            divergence = job.found.pop(index)
            divergence.first_difference["minimization"] = how
            yield Found(divergence)
        else:
            self.stuck_in[job.task.group] += 1
            yield Stuck(stuck_divergence(job.task.cases[index], how, self.limits))
        rest = index + 1 < len(job.task.cases) and not self.abandoned(job.task.group)
        yield Checked(job.task, job.first, index + 1, finished=not rest)
        if rest:
            retries.appendleft(Job(job.task, index + 1))

    def check_alone(self, family: Family, case: Case, fresh: bool = False) -> Divergence | Stuck | None:
        """``case`` checked alone in a worker (not minimized): its divergence, Stuck where it hangs or
        kills the worker, None when it agrees. The worker is kept for the next case, unless it hangs or
        dies, or ``fresh`` asks for a new one."""
        if fresh and self.prober is not None:
            self.prober.stop()
            self.prober = None
        if self.prober is None:
            self.prober = self._new_worker(self.retry)
        worker = self.prober
        self._send(worker, Job(Task(family, case.component, [case]), 0, minimize=False))
        found = None
        while True:
            wait([worker.conn, worker.process.sentinel], timeout=POLL_SECONDS)
            for message in worker.messages():
                if message[0] == UNLOADABLE:
                    raise FamilyUnloadable(message[1])
                if message[0] == "divergence":
                    found = message[2]
                elif message[0] == "done":
                    worker.jobs.popleft()
                    return found
            if not worker.process.is_alive() or worker.overdue():
                self.prober = None
                return Stuck(stuck_divergence(case, worker.stop(), self.retry))

    def probe(self, family: Family, case: Case, fresh: bool = False) -> str | None:
        """The signature of ``check_alone``: None when the case agrees."""
        found = self.check_alone(family, case, fresh)
        return None if found is None else (found.divergence if isinstance(found, Stuck) else found).signature

    def close(self) -> list[Divergence]:
        """Stops every worker; returns the divergences they had sent and the run did not take yet
        (an interrupted run records them, minimized or as found)."""
        left: list[Divergence] = []
        for worker in self.workers:
            for message in worker.messages():
                if message[0] == "found":
                    worker.jobs[0].found[message[1]] = message[2]
                elif message[0] == "divergence":
                    worker.jobs[0].found.pop(message[1], None)
                    left.append(message[2])
                elif message[0] == "done":
                    worker.jobs.popleft()
            left += [divergence for job in worker.jobs for divergence in job.found.values()]
        for worker in [*self.workers, *([self.prober] if self.prober else [])]:
            worker.stop()
        return left


def recheck_alone(pool: Pool, family: Family, divergence: Divergence) -> bool:
    """Checks a timed-out or crashed case again alone in a fresh worker: True when it hangs or
    crashes the same way. Otherwise it was slow or crashed only after other cases (a loaded machine,
    state left behind), and gets a signature of its own, so that a gate can tell it from a case that
    hangs or crashes every time."""
    alone = pool.probe(family, divergence.case, fresh=True)
    divergence.first_difference["rechecked under"] = f"{pool.retry.case_timeout:g} s"
    if alone == divergence.signature:
        return True
    divergence.first_difference["checked alone"] = alone or "agrees with the oracle"
    divergence.kind += ", not when checked alone"
    return False


def hangs_without_impl(pool: Pool, family: Family, divergence: Divergence) -> bool:
    """Checks a case that hangs or crashes alone again under the same limits, with an implementation
    that answers nothing at once (textbound.run.silent_impl): True when it still hangs or crashes the same
    way, in each of SILENT_PROBES fresh workers, so the oracle (or the harness) did, and impl is not
    to blame (one worker starved on a loaded machine would otherwise clear impl's own hang)."""
    silent = Pool(SILENT_IMPL, 1, pool.retry)
    try:
        return all(silent.probe(family, divergence.case, fresh=True) == divergence.signature
                   for _ in range(SILENT_PROBES))
    finally:
        silent.close()


def oracle_failure(divergence: Divergence) -> Divergence:
    """The divergence as the oracle's failure (``oracle failure: timed out``), recorded apart from impl's."""
    return replace(divergence, expected="an answer from the oracle", kind=f"{ORACLE_FAILURE} {divergence.kind}",
                   first_difference={**divergence.first_difference,
                                     "without impl": f"{divergence.kind} as well, with {SILENT_IMPL}"})


def judged_stuck(pool: Pool, family: Family, divergence: Divergence, minimized: set[tuple[str, str]]) -> Divergence:
    """A timed-out or crashed case as the run records it: checked again alone in a fresh worker; if it
    hangs or crashes so alone and without impl as well, the oracle's failure; else, if it does so alone,
    minimized when its (family, signature) is not in ``minimized`` yet (then added: the first of each
    is). ``pool.retry`` bounds every try (retry_limits)."""
    key = (family.name, divergence.signature)
    alone = recheck_alone(pool, family, divergence)
    if alone and hangs_without_impl(pool, family, divergence):
        return oracle_failure(divergence)
    if alone and key not in minimized:
        minimized.add(key)
        return minimize_stuck(pool, family, divergence)
    return divergence


def minimize_stuck(pool: Pool, family: Family, divergence: Divergence) -> Divergence:
    """Shrinks a case that hangs or crashes alone, as ``textbound.shrinking.minimize.shrink`` shrinks its check's
    field (ddmin on a text or list, then the members of structured ones), while it still hangs or
    crashes the same way; a case without that field is kept whole. Every try runs in a worker under
    ``pool.retry`` (retry_limits), all of them within MINIMIZE_TRIES such limits, at most
    ``minimize_timeout``; the record says both (a try that passes leaves its worker for the next one:
    loading a family for each would cost more)."""
    from ..shrinking.minimize import shrink

    case, signature = divergence.case, divergence.signature
    name = minimized_field(case)
    if name is None:
        return divergence
    budget = min(pool.limits.minimize_timeout, MINIMIZE_TRIES * pool.retry.case_timeout)
    divergence.first_difference["minimized under"] = f"{pool.retry.case_timeout:g} s a try, {budget:g} s in all"
    deadline = time.monotonic() + budget

    def with_value(value) -> Case:
        return replace(case, input={**case.input, name: value})

    def still_fails(value) -> bool:
        return time.monotonic() < deadline and pool.probe(family, with_value(value)) == signature

    smallest = shrink(case.input[name], still_fails)
    if smallest != case.input[name]:
        divergence.minimized = with_value(smallest)
    return divergence


def minimized_field(case: Case) -> str | None:
    """The input field its check shrinks (``@check(..., minimize=NAME)``), when the case has it:
    a case built without the optional field (or a check with none) is kept as it is."""
    from ..checks import MINIMIZED_FIELD
    name = MINIMIZED_FIELD.get((case.component, case.property))
    return name if name in case.input else None
