"""``textbound bench --overhead``: what the harness adds around the calls it checks, per component.

For each component, a sample of its cases from the real case builders is checked as a worker
checks a job (``pool.check_job``: ``run_check`` per case, the worker's clock, the task pickled to
the worker and back) on one process, and the same impl and oracle calls are made directly in a
loop. The ratio of the two times is the harness's overhead (1.0 is the limit; the target is 1.5):

    overhead tokenizer 1.21  (14,950 cases/s through the harness, 18,090 cases/s calls alone; 4,391 cases)

One line per component of the form ``overhead COMPONENT RATIO`` (CI scripts read it). A component
whose check interleaves impl's and the oracle's steps (stops, chat, tools, structured) has no loop
of calls apart from its check, and is named on a line of its own as not measured.
"""
from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from itertools import islice

from .budget import Budget
from .divergence import Case
from .families import Family
from .implementation import Implementation

CASES_PER_COMPONENT = 25000
# The tokenizer's million cases a family are sampled evenly (every 50th), so the sample has the
# run's mix of corpus snippets, sweeps and decodes; the other components' cases are taken as built.
SAMPLE_STEP = {"tokenizer": 50}
REPEATS = 3  # the best of each, interleaved: the machine is shared
OVERHEAD_TARGET = 1.5


def _second_oracles(subject) -> list:
    from oracles.disagreements import second_oracles
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
    from .checks.streaming import StreamInput, stream_impl
    given = StreamInput.of(case)
    subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens)
    stream_impl(subject, given)


def _decode_stream_calls(subject, case: Case) -> None:
    from .checks.streaming import StreamInput, decode_stream_shown
    _stream_calls(subject, case)
    decode_stream_shown(subject, StreamInput.of(case))


# The impl and oracle calls each property's check makes, without the comparing and recording.
DIRECT_CALLS: dict[tuple[str, str], Callable] = {
    ("tokenizer", "encode"): _encode_calls, ("tokenizer", "decode"): _decode_calls,
    ("tokenizer", "vocab"): _vocab_calls,
    ("detokenizer", "stream"): _stream_calls, ("detokenizer", "decode_stream"): _decode_stream_calls,
}


def _timed(work: Callable[[], object], times: list[float]) -> None:
    started = time.perf_counter()
    work()
    times.append(time.perf_counter() - started)


def component_overhead(subject, family: Family, component: str, cases: list[Case]) -> dict:
    """{"component", "cases", "harness_seconds", "direct_seconds", "ratio"} for ``cases``, the best of
    REPEATS interleaved runs of each."""
    from .pool import JobRun, Task, check_job

    task = Task(family, component, cases)
    messages: list[tuple] = []
    run = JobRun(0, True, [0.0] * 4, messages.append)
    calls = [DIRECT_CALLS[(case.component, case.property)] for case in cases]

    def harness() -> None:
        check_job(subject, pickle.loads(pickle.dumps(task)), run)

    def direct() -> None:
        for call, case in zip(calls, cases):
            call(subject, case)

    harness(), direct()  # warm: caches that the run fills once per family are filled here too
    harness_times: list[float] = []
    direct_times: list[float] = []
    for _ in range(REPEATS):
        _timed(harness, harness_times)
        _timed(direct, direct_times)
    harness_seconds, direct_seconds = min(harness_times), min(direct_times)
    return {"component": component, "cases": len(cases), "harness_seconds": harness_seconds,
            "direct_seconds": direct_seconds, "ratio": harness_seconds / direct_seconds}


def run_overhead_bench(impl: Implementation, family: Family, components: list[str], budget: Budget,
                       cases_per_component: int = CASES_PER_COMPONENT) -> list[dict]:
    """Prints ``overhead COMPONENT RATIO`` and cases per second per component on ``family``; returns
    the measurements (``component_overhead``'s dicts)."""
    from .checks import Subject, case_source

    subject = Subject(family.name, family.path, impl)
    rows, unmeasured = [], []
    for component in components:
        if not impl.provides(component):
            continue
        if not any(measured == component for measured, _ in DIRECT_CALLS):  # not worth building its cases
            unmeasured.append(component)
            continue
        built = case_source(family, component, budget, 0)
        cases = list(islice(built, 0, SAMPLE_STEP.get(component, 1) * cases_per_component,
                            SAMPLE_STEP.get(component, 1)))
        cases = [case for case in cases if not impl.missing_for(case.component, case.property)]
        if not cases or any((case.component, case.property) not in DIRECT_CALLS for case in cases):
            unmeasured.append(component)
            continue
        row = component_overhead(subject, family, component, cases)
        rows.append(row)
        print(f"overhead {component} {row['ratio']:.2f}  ({row['cases'] / row['harness_seconds']:,.0f} cases/s "
              f"through the harness, {row['cases'] / row['direct_seconds']:,.0f} cases/s calls alone; "
              f"{row['cases']:,} cases of {family.name}, budget {budget.name}; target {OVERHEAD_TARGET:g})")
    if unmeasured:
        print(f"overhead not measured for {', '.join(unmeasured)}: their checks interleave impl's and the "
              "oracle's steps, so there is no loop of the calls alone")
    return rows
