"""``textbound bench --overhead``: what the harness adds around the calls it checks, per component.

For each component, a sample of its cases from the real case builders is checked as a worker
checks a job (``pool.check_job``: ``run_check`` per case, the worker's clock, the task pickled to
the worker and back) on one process, and set against the time of the same impl and oracle calls.
The ratio of the two times is the harness's overhead (1.0 is the limit; the target is 1.5):

    overhead tokenizer 1.21  (14,950 cases/s through the harness, 18,090 cases/s calls alone; 4,391 cases)

One line per component of the form ``overhead COMPONENT RATIO`` (CI scripts read it). For the
tokenizer and the detokenizer the calls are made directly in a loop (DIRECT_CALLS). The checks of
stops, chat, tools and structured interleave impl's steps with the oracle's, so their calls are
timed where the check makes them (textbound.run.timed_calls: impl's names and objects, the family's
tokenizers, and the oracle names of ORACLE_NAMES), and the line says so; structured's inputs are
drawn inside the check (properties/regex_samples.py, instance_samples.py), which is the harness's time.
"""
from __future__ import annotations

import importlib
import pickle
import time
from collections.abc import Callable
from itertools import islice

from ..adapters.contract import Tokenizer, checked_as, unchecked
from ..families import Family
from ..naming.divergence import Case
from ..plan.budget import Budget
from ..plan.implementation import Implementation

CASES_PER_COMPONENT = 25000
# The tokenizer's million cases a family are sampled evenly (every 50th), so the sample has the
# run's mix of corpus snippets, sweeps and decodes; so are the components whose cases take
# milliseconds (every 10th: a second or two a pass) or a tenth of a second (structured); the
# detokenizer's cases are taken as built.
SAMPLE_STEP = {"tokenizer": 50, "stops": 10, "chat": 10, "tools": 10, "structured": 10}
# The oracle's names that the interleaving checks call by a module's global name: (module, name),
# each wrapped by the CallClock while a component is measured. Hypothesis's strategies and the
# structured samplers are not among them: drawing a case's inputs is the harness's work.
ORACLE_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "stops": (("textbound.checks.stops", "stop_outcome"), ("textbound.checks.stops", "held_back_reference")),
    "chat": (("textbound.checks.chat", "render"), ("textbound.checks.chat", "FamilyChatOracle")),
    "tools": (("textbound.checks.tools", "tool_reference"), ("textbound.checks.tools", "transformers_response"),
              ("textbound.checks.tools", "render")),
    # matches and viable run impl's pattern (through ``regex``); jsonschema and the two engines judge.
    "structured": (("textbound.checks.structured", "schema_errors"), ("textbound.checks.structured", "failing_keywords"),
                   ("textbound.checks.structured", "matches"), ("textbound.checks.structured", "viable"),
                   ("textbound.oracles.structured_oracles", "ByteAcceptor"), ("textbound.oracles.structured_oracles", "OutlinesMask"),
                   ("textbound.oracles.structured_oracles", "LlguidanceMask")),
}
# Oracle objects a check module builds once per process and keeps (functools caches): emptied before
# the first timed pass, so that they are built again through the clock and their calls are timed in
# every later pass of either kind.
ORACLE_CACHES: dict[str, tuple[tuple[str, str], ...]] = {"structured": (("textbound.checks.structured", "_acceptors"),)}
REPEATS = 3  # the best of each, interleaved, in CPU seconds of this process: the machine is shared
OVERHEAD_TARGET = 1.5


def _second_oracles(subject) -> list:
    from textbound.oracles.disagreements import second_oracles
    return subject.cached("bench second oracles", lambda: second_oracles(subject.path))


def _encode_calls(subject, case: Case) -> None:
    text, special = case.input["text"], case.input.get("add_special_tokens", False)
    subject.oracle.encode(text, special)
    subject.tokenizer.encode(text, add_special_tokens=special)
    if not special:
        for oracle in _second_oracles(subject):
            oracle.encode(text)


def _decode_calls(subject, case: Case) -> None:
    ids, skip = case.input["ids"], case.input.get("skip_special_tokens", False)
    subject.oracle.decode(ids, skip)
    subject.tokenizer.decode(ids, skip_special_tokens=skip)
    if not skip:
        for oracle in _second_oracles(subject):
            oracle.decode(ids)


def _vocab_calls(subject, case: Case) -> None:
    oracle, tokenizer = subject.oracle, subject.tokenizer
    oracle.vocab_size, tokenizer.vocab_size
    for token_id in case.input["ids"]:
        token = oracle.id_to_token(token_id)
        oracle.tokenizer.token_to_id(token)
        tokenizer.token_to_id(tokenizer.id_to_token(token_id))


def _stream_calls(subject, case: Case) -> None:
    from ..checks.streaming import StreamInput, stream_impl
    given = StreamInput.of(case)
    subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens)
    stream_impl(subject, given)


def _decode_stream_calls(subject, case: Case) -> None:
    from ..checks.streaming import StreamInput, decode_stream_shown
    _stream_calls(subject, case)
    decode_stream_shown(subject, StreamInput.of(case))


def _interleaved_calls(subject, case: Case) -> None:
    from ..checks.shapes import detokenizer_feeding, round_robin
    feeding, streams = detokenizer_feeding(subject), case.input["streams"]
    for stream in streams:
        feeding.alone(stream)
    feeding.interleaved(streams, round_robin([feeding.feeds(stream) for stream in streams]))


# The impl and oracle calls each property's check makes, without the comparing and recording.
DIRECT_CALLS: dict[tuple[str, str], Callable] = {
    ("tokenizer", "encode"): _encode_calls, ("tokenizer", "decode"): _decode_calls,
    ("tokenizer", "vocab"): _vocab_calls,
    ("detokenizer", "stream"): _stream_calls, ("detokenizer", "decode_stream"): _decode_stream_calls,
    ("detokenizer", "interleaved"): _interleaved_calls,
}


def _timed(work: Callable[[], object], times: list[float]) -> None:
    started = time.process_time()
    work()
    times.append(time.process_time() - started)


def _harness(subject, family: Family, component: str, cases: list[Case]) -> Callable[[], None]:
    """Checks ``cases`` as a worker checks a job, the task pickled there and back."""
    from ..run.pool import JobRun, Task, check_job

    task = Task(family, component, cases)
    run = JobRun(0, True, [0.0] * 4, lambda message: None)
    return lambda: check_job(subject, pickle.loads(pickle.dumps(task)), run)


def _best_of(harness: Callable[[], None], calls: Callable[[], float]) -> tuple[float, float]:
    """The least harness time and the least time of the calls over REPEATS interleaved runs, after
    one warming run of each (the caches a run fills once per family are filled here too)."""
    harness(), calls()
    harness_times: list[float] = []
    calls_times: list[float] = []
    for _ in range(REPEATS):
        _timed(harness, harness_times)
        calls_times.append(calls())
    return min(harness_times), min(calls_times)


def _row(component: str, cases: list[Case], harness_seconds: float, calls_seconds: float, how: str) -> dict:
    return {"component": component, "cases": len(cases), "harness_seconds": harness_seconds,
            "direct_seconds": calls_seconds, "ratio": harness_seconds / calls_seconds, "calls": how}


def component_overhead(subject, family: Family, component: str, cases: list[Case]) -> dict:
    """{"component", "cases", "harness_seconds", "direct_seconds", "ratio", "calls"} for ``cases`` whose
    calls DIRECT_CALLS makes in a loop, the best of REPEATS interleaved runs of each."""
    calls = [DIRECT_CALLS[(case.component, case.property)] for case in cases]
    bare = _bare(subject)

    def direct() -> float:
        times: list[float] = []
        _timed(lambda: [call(bare, case) for call, case in zip(calls, cases)], times)
        return times[0]

    harness_seconds, direct_seconds = _best_of(_harness(subject, family, component, cases), direct)
    return _row(component, cases, harness_seconds, direct_seconds, "calls alone")


def _bare(subject):
    """The subject as the calls alone see it, sharing its loaded tokenizers and cache: the engine's own
    objects, without the contract's checks (textbound.adapters.contract), which are the harness's work."""
    from ..checks import Subject

    bare = Subject(subject.family, subject.path, None, subject.cache)
    bare.impl = unchecked(subject.impl)
    bare.__dict__.update(oracle=subject.oracle, tokenizer=unchecked(subject.tokenizer))
    return bare


def interleaved_overhead(subject, family: Family, component: str, cases: list[Case]) -> dict:
    """component_overhead's dict for a component whose calls are timed where its checks make them:
    a second subject of the family, sharing the loaded tokenizers, answers through one CallClock
    (what its checks cache is wrapped once, and keeps counting in every later pass); the contract's
    checks stand outside the clock, as the harness's work."""
    from ..checks import Subject, run_check
    from ..run.timed_calls import CallClock

    clock = CallClock()
    clocked = Subject(subject.family, subject.path, clock.wrap(unchecked(subject.impl)))
    clocked.__dict__.update(oracle=clock.wrap(subject.oracle),
                            tokenizer=checked_as(clock.wrap(unchecked(subject.tokenizer)), Tokenizer))
    uncleared = list(ORACLE_CACHES.get(component, ()))

    def timed() -> float:
        while uncleared:
            module, name = uncleared.pop()
            getattr(importlib.import_module(module), name).cache_clear()
        modules = [(importlib.import_module(module), name) for module, name in ORACLE_NAMES[component]]
        originals = [getattr(module, name) for module, name in modules]
        for (module, name), original in zip(modules, originals):
            setattr(module, name, clock.wrap(original))
        before = clock.inside_seconds()
        try:
            for case in cases:
                run_check(clocked, case)
        finally:
            for (module, name), original in zip(modules, originals):
                setattr(module, name, original)
        return clock.inside_seconds() - before

    harness_seconds, calls_seconds = _best_of(_harness(subject, family, component, cases), timed)
    return _row(component, cases, harness_seconds, calls_seconds, "calls timed inside the checks")


def run_overhead_bench(impl: Implementation, family: Family, components: list[str], budget: Budget,
                       cases_per_component: int = CASES_PER_COMPONENT) -> list[dict]:
    """Prints ``overhead COMPONENT RATIO`` and cases per second per component on ``family``; returns
    the measurements (``component_overhead``'s dicts)."""
    from ..checks import Subject, case_source

    subject = Subject(family.name, family.path, impl)
    rows, unmeasured = [], []
    for component in components:
        if not impl.provides(component):
            continue
        built = case_source(family, component, budget, 0)
        cases = list(islice(built, 0, SAMPLE_STEP.get(component, 1) * cases_per_component,
                            SAMPLE_STEP.get(component, 1)))
        cases = [case for case in cases if not impl.missing_for(case.component, case.property)]
        if cases and all((case.component, case.property) in DIRECT_CALLS for case in cases):
            row = component_overhead(subject, family, component, cases)
        elif cases and component in ORACLE_NAMES:
            row = interleaved_overhead(subject, family, component, cases)
        else:
            unmeasured.append(component)
            continue
        rows.append(row)
        print(f"overhead {component} {row['ratio']:.2f}  ({row['cases'] / row['harness_seconds']:,.0f} cases/s "
              f"through the harness, {row['cases'] / row['direct_seconds']:,.0f} cases/s {row['calls']}; "
              f"{row['cases']:,} cases of {family.name}, budget {budget.name}; target {OVERHEAD_TARGET:g}"
              f"{'' if row['ratio'] <= OVERHEAD_TARGET else ', not met'})")
    if unmeasured:
        print(f"overhead not measured for {', '.join(unmeasured)}: no cases of theirs to time")
    return rows
