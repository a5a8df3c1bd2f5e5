"""The harness's own speed: cases per second per component through the real runner (worker
processes, chunks, pickling and all), and how that scales from 1 to N ``--jobs``.

The cases are generated before the clock starts, so this measures checking alone; each
measurement starts fresh workers, so loading the family's tokenizers in each worker is included.
``textbound bench`` calls ``run_scaling_bench``; it prints, per component:

    component      cases  jobs=1 cases/s  jobs=2 cases/s  speedup
    tokenizer      30000         13157.7         27781.5     2.11x
"""
from __future__ import annotations

import io
import os
import tempfile
import time
from itertools import islice

from ..families import Family
from ..plan.budget import Budget
from ..plan.implementation import Implementation
from ..records.report import Recorder, RunInfo
from ..run.progress import Progress

CASES_PER_COMPONENT = 30000  # 20 chunks: seconds of checking per worker, so its start-up (forking, loading the family) is not most of it


def measure(impl: Implementation, family: Family, component: str, cases: list, jobs: int, budget: Budget) -> float:
    """Cases per second checking ``cases`` with ``jobs`` workers."""
    from ..run.runner import Plan, run

    with tempfile.TemporaryDirectory() as report_dir:
        recorder = Recorder(report_dir, RunInfo(impl.name, impl.version, {}, 0, budget.name,
                                                {family.name: str(family.path)}))
        started = time.perf_counter()
        run(Plan(impl, [family], [component], budget), recorder, jobs=jobs, case_source=lambda *_: iter(cases),
            progress=Progress(io.StringIO()))
        return len(cases) / (time.perf_counter() - started)


def run_scaling_bench(impl: Implementation, family: Family, components: list[str], budget: Budget,
                      jobs_counts: list[int] | None = None, cases_per_component: int = CASES_PER_COMPONENT) -> list[dict]:
    """Prints and returns {"component", "cases", "jobs", "cases_per_second"} for each measurement."""
    from ..checks import case_source

    jobs_counts = jobs_counts or sorted({1, os.cpu_count() or 1})
    print(f"{'component':<12} {'cases':>7} " + " ".join(f"{f'jobs={j} cases/s':>16}" for j in jobs_counts)
          + f" {'speedup':>8}")
    rows = []
    for component in components:
        if not impl.provides(component):
            continue
        cases = list(islice(case_source(family, component, budget, 0), cases_per_component))
        rates = [measure(impl, family, component, cases, jobs, budget) for jobs in jobs_counts]
        rows += [{"component": component, "cases": len(cases), "jobs": j, "cases_per_second": r}
                 for j, r in zip(jobs_counts, rates)]
        print(f"{component:<12} {len(cases):>7} " + " ".join(f"{r:>16.1f}" for r in rates)
              + f" {rates[-1] / rates[0]:>7.2f}x")
    return rows
