"""``textbound mutate``: the harness measured on the mutation catalogue (mutants/).

Each mutant is checked as ``textbound check --impl textbound.mutants.NAME --component ITS_COMPONENT --budget
quick`` would check it: the same case builders and checks, on every family of such a run (the
embedded ones, those under $TEXTBOUND_MODELS, the budget's fuzzed pipelines). A mutant is *caught*
by a divergence on a case that the unmutated implementation (``--base``, impl) passes, so a
divergence impl has itself never counts. The hunt stops at the first family with such divergences;
up to ``--examples`` of them are minimized (textbound.shrinking.minimize) and the smallest is shown:

    $ python -m textbound.run.mutate --jobs 2
    caught  stops_within_delta  stops  [gpt2] stops/stream/missed a stop
            {"text": "ab", "stops": ["ab"], "splits": [1]}
    ...
    mutation score: 45/45 caught (100.0%) at the quick budget in 412.0 s (--jobs 2)

A mutant the quick budget misses is a hole in the quick budget, to close with coverage in the case
builders. Exit status: 0 every mutant caught, 1 some missed (or undecided within ``--time-limit``),
2 the run could not be set up.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from multiprocessing import get_context
from pathlib import Path

from textbound import mutants
from textbound.mutants import BY_NAME, CATALOGUE, Mutant

from ..families import Family, FamilyError, fuzz_families, resolve
from ..naming.divergence import STRATUM_FIELD, Case, Divergence, plain_json
from ..one_line import one_line
from ..plan.budget import BUDGETS, Budget, add_budget_option
from ..plan.implementation import DEFAULT_IMPL, Implementation, ImplementationError

EXIT_OK, EXIT_MISSED, EXIT_SETUP = 0, 1, 2
MUTANT_FILES = frozenset(path.name for path in Path(mutants.__file__).parent.glob("*.py"))
DEFAULT_EXAMPLES = 2  # divergences minimized per mutant; the smallest is reported
DEFAULT_TIME_LIMIT = 900.0  # seconds per mutant before it is reported undecided
LONG_TEXT = 40  # characters: a text field longer than this is shrunk in an example, a shorter one is a name
SHOWN_CHARACTERS = 400  # of a minimized input, in the printed summary (the JSON report has it whole)


@dataclass
class MutantVerdict:
    """What checking one mutant found."""

    name: str
    component: str
    bug: str
    outcome: str  # "caught", "missed", "undecided" (time limit) or "error"
    cases: int
    seconds: float
    family: str | None = None
    signature: str | None = None
    example: dict | None = None  # the minimized input
    expected: object = None
    actual: object = None
    error: str | None = None

    def describe(self) -> str:
        head = f"{self.outcome:9} {self.name}  {self.component}  {self.cases} cases, {self.seconds:.1f} s"
        if self.outcome == "caught":
            shown = json.dumps(self.example, ensure_ascii=False)
            if len(shown) > SHOWN_CHARACTERS:
                shown = shown[:SHOWN_CHARACTERS] + " ..."
            return f"{head}\n          [{self.family}] {self.signature}\n          {shown}"
        return f"{head}\n          {self.error or self.bug}"


class _Replayable:
    """An iterator's items, kept as they are drawn, so a second pass costs nothing to generate."""

    def __init__(self, items: Iterator):
        self._items, self._drawn = items, []

    def __iter__(self) -> Iterator:
        index = 0
        while True:
            if index == len(self._drawn):
                try:
                    self._drawn.append(next(self._items))
                except StopIteration:
                    return
            yield self._drawn[index]
            index += 1


_CASES: dict[tuple[str, str, str, int], _Replayable] = {}  # per process: mutants share generated cases


def _cases(family: Family, component: str, budget: Budget, seed: int) -> _Replayable:
    from ..checks import case_source
    key = (str(family.path), component, budget.name, seed)
    if key not in _CASES:
        _CASES[key] = _Replayable(iter(case_source(family, component, budget, seed)))
    return _CASES[key]


_BASE_SUBJECTS: dict[tuple[str, str], object] = {}  # per process: the base's loaded tokenizers serve every mutant


def _base_subject(base: Implementation, family: Family):
    from ..checks import Subject
    key = (base.name, str(family.path))
    if key not in _BASE_SUBJECTS:
        _BASE_SUBJECTS[key] = Subject(family.name, family.path, base)
    return _BASE_SUBJECTS[key]


def hunt(mutant: Mutant, families: list[Family], budget: Budget = BUDGETS["quick"], seed: int = 0,
         base: str = DEFAULT_IMPL, examples: int = DEFAULT_EXAMPLES, time_limit: float | None = DEFAULT_TIME_LIMIT) -> MutantVerdict:
    """Checks ``mutant`` family by family until a family gives divergences that ``base`` does not
    have; returns the smallest of up to ``examples`` of them, minimized."""
    from ..checks import Subject, run_check
    started = time.monotonic()
    verdict = MutantVerdict(mutant.name, mutant.component, mutant.bug, "missed", 0, 0.0)
    try:
        impl, reference = Implementation(mutant.module), Implementation(base)
        for family in families:
            subject, base_subject = Subject(family.name, family.path, impl), _base_subject(reference, family)
            found: list[Divergence] = []
            for case in _cases(family, mutant.component, budget, seed):
                verdict.cases += 1
                divergence = run_check(subject, case)
                if divergence is not None and _raised_in_mutants(divergence):
                    raise MutantBroken(f"the mutant itself raised ({divergence.first_difference['where']}): "
                                       f"{divergence.actual}")
                # Two references disagreeing says nothing about the mutant: only impl's divergences catch it.
                if divergence is not None and not divergence.is_oracle_disagreement \
                        and run_check(base_subject, case) is None:
                    found.append(divergence)
                    if len(found) >= examples:
                        break
                if time_limit is not None and time.monotonic() - started > time_limit:
                    verdict.outcome = "undecided"
                    verdict.error = f"not caught within the time limit of {time_limit:g} s"
                    break
            if found:
                _report_smallest(verdict, [_minimized(subject, base_subject, d) for d in found])
                break
            if verdict.outcome == "undecided":
                break
    except Exception as exc:  # noqa: BLE001 - a harness or oracle failure is reported, not raised
        verdict.outcome, verdict.error = "error", f"{type(exc).__name__}: {exc}"
    if verdict.outcome == "missed":
        verdict.error = f"not caught on {len(families)} families: {mutant.bug}"
    verdict.seconds = round(time.monotonic() - started, 1)
    return verdict


class MutantBroken(Exception):
    """The mutant's own code failed (impl changed under it): no catch can count."""


def _raised_in_mutants(divergence: Divergence) -> bool:
    """Whether the exception a divergence records was raised in a mutant's module, not in impl."""
    where = divergence.first_difference.get("where", "") if divergence.kind.startswith("raised ") else ""
    return where.split(":")[0] in MUTANT_FILES


def _minimized(subject, base_subject, divergence: Divergence) -> Divergence:
    """The divergence minimized as ``check`` minimizes it, then its other list and dict fields (splits,
    stops, prompt ids, tools, template variables) and long texts shrunk too, so the example reads; every smaller case still diverges the same
    way on the mutant and passes on the base."""
    from ..checks import MINIMIZED_FIELD, run_check
    from ..shrinking.minimize import minimize, shrink

    def diverges(candidate: Case) -> bool:
        try:
            found = run_check(subject, candidate)
            return (found is not None and found.signature == divergence.signature
                    and run_check(base_subject, candidate) is None)
        except Exception:  # noqa: BLE001 - a field the check cannot do without: keep it
            return False

    smaller = minimize(subject, divergence)
    case = smaller.smallest
    if not diverges(case):
        smaller, case = divergence, divergence.case
    inputs = dict(case.input)
    for name, value in case.input.items():
        if name not in (MINIMIZED_FIELD.get((case.component, case.property)), STRATUM_FIELD) and _shrinkable(value):
            inputs[name] = shrink(value, lambda shorter: diverges(replace(case, input={**inputs, name: shorter})))
    if inputs != case.input:
        tidy = replace(case, input=inputs)
        smaller = run_check(subject, tidy) or smaller
        smaller.case, smaller.minimized = divergence.case, tidy
    return smaller


def _shrinkable(value) -> bool:
    """A list, a dict or a long text; short texts are names (a template, a format) that must stay."""
    return isinstance(value, (list, dict)) and bool(value) or isinstance(value, str) and len(value) > LONG_TEXT


def _report_smallest(verdict: MutantVerdict, found: list[Divergence]) -> None:
    smallest = min(found, key=lambda d: len(d.smallest.to_json()))
    verdict.outcome, verdict.family, verdict.signature = "caught", smallest.case.family, smallest.signature
    verdict.example = smallest.smallest.input
    verdict.expected, verdict.actual = plain_json(smallest.expected), plain_json(smallest.actual)


def _hunt_in_worker(arguments: tuple) -> dict:
    return asdict(hunt(*arguments))


def run_mutants(mutants: Iterable[Mutant], families: list[Family], budget: Budget = BUDGETS["quick"],
                seed: int = 0, jobs: int = 1, base: str = DEFAULT_IMPL, examples: int = DEFAULT_EXAMPLES,
                time_limit: float | None = DEFAULT_TIME_LIMIT, on_verdict=None) -> list[MutantVerdict]:
    """Each mutant's verdict, in catalogue order; with ``jobs`` > 1 checked in that many worker
    processes (started fresh, so no mutant's imports reach another run). ``on_verdict`` is called
    with each verdict as it comes."""
    mutants = list(mutants)
    tasks = [(mutant, families, budget, seed, base, examples, time_limit) for mutant in mutants]
    verdicts: dict[str, MutantVerdict] = {}
    if jobs <= 1:
        for task in tasks:
            verdicts[task[0].name] = verdict = hunt(*task)
            if on_verdict:
                on_verdict(verdict)
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_hunt_in_worker, task) for task in tasks]
            for future in as_completed(futures):
                verdict = MutantVerdict(**future.result())
                verdicts[verdict.name] = verdict
                if on_verdict:
                    on_verdict(verdict)
    return [verdicts[mutant.name] for mutant in mutants]


def score_line(verdicts: list[MutantVerdict], seconds: float, jobs: int, budget: str) -> str:
    caught = sum(v.outcome == "caught" for v in verdicts)
    share = 100.0 * caught / len(verdicts) if verdicts else 0.0
    return (f"mutation score: {caught}/{len(verdicts)} caught ({share:.1f}%) at the {budget} budget "
            f"in {seconds:.1f} s (--jobs {jobs})")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textbound mutate", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``textbound mutate`` (also what cli.py's subcommand adds)."""
    parser.add_argument("--mutant", action="append", default=[], metavar="NAME",
                        help="a mutant of the catalogue (repeatable; default: with neither this nor --component, all)")
    parser.add_argument("--component", action="append", default=[], metavar="NAME",
                        help="every mutant of this component too (repeatable; default: none)")
    parser.add_argument("--family", action="append", default=[], metavar="NAME",
                        help="check on these families only (default: every family of a quick check)")
    add_budget_option(parser, "quick")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the seed of the cases (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="mutants checked at once, each in a worker process (default: %(default)s)")
    parser.add_argument("--base", default=DEFAULT_IMPL, metavar="MODULE",
                        help=f"the implementation the mutants break (default: {DEFAULT_IMPL})")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N",
                        help=f"divergences minimized per mutant, the smallest shown (default: {DEFAULT_EXAMPLES})")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                        help=f"per mutant, after which it is reported undecided (default: {DEFAULT_TIME_LIMIT:g})")
    parser.add_argument("--report", type=Path, default=None, metavar="PATH", help="also write the verdicts as JSON here (default: none)")
    parser.add_argument("--list", action="store_true", help="print the catalogue and exit (default: off)")


def families_for(names: list[str], budget: Budget, seed: int, fuzz_dir: Path) -> list[Family]:
    """The families of ``textbound check`` with these ``--family`` names (none: every family and
    the budget's fuzzed pipelines)."""
    families = resolve(names, [], [])
    if not names:
        families += fuzz_families(seed, budget.fuzz_pipelines, fuzz_dir)
    return families


def main(argv: list[str] | None = None) -> int:
    return run_command(_parser().parse_args(argv))


def run_command(args: argparse.Namespace) -> int:
    """``textbound mutate`` with parsed ``args`` (see ``add_arguments``)."""
    if args.list:
        for mutant in CATALOGUE:
            print(f"{mutant.name:40} {mutant.component:12} {mutant.bug} — {mutant.drawn_from}")
        return EXIT_OK
    unknown = [name for name in args.mutant if name not in BY_NAME]
    if unknown:
        print(f"textbound mutate: unknown mutant {', '.join(unknown)} (see --list)", file=sys.stderr)
        return EXIT_SETUP
    chosen = [m for m in CATALOGUE if m.name in args.mutant or m.component in args.component]
    if not (args.mutant or args.component):
        chosen = list(CATALOGUE)
    if not chosen:
        print(f"textbound mutate: no mutant of component {', '.join(args.component)} (see --list)", file=sys.stderr)
        return EXIT_SETUP
    budget = BUDGETS[args.budget]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="textbound-mutate-") as fuzz_dir:
        try:
            Implementation(args.base)
            families = families_for(args.family, budget, args.seed, Path(fuzz_dir))
        except (ImplementationError, FamilyError) as exc:
            print(f"textbound mutate: {one_line(exc)}", file=sys.stderr)
            return EXIT_SETUP
        print(f"textbound mutate: {len(chosen)} mutants on {len(families)} families at the {budget.name} budget",
              flush=True)
        verdicts = run_mutants(chosen, families, budget, args.seed, max(1, args.jobs), args.base, args.examples,
                               args.time_limit, on_verdict=lambda v: print(v.describe(), flush=True))
    seconds = time.monotonic() - started
    print(score_line(verdicts, seconds, max(1, args.jobs), budget.name))
    for verdict in verdicts:
        if verdict.outcome != "caught":
            print(f"  NOT CAUGHT ({verdict.outcome}) {verdict.name}: {verdict.error}")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps({"score": score_line(verdicts, seconds, max(1, args.jobs), budget.name),
                                           "seconds": round(seconds, 1),
                                           "verdicts": [asdict(v) for v in verdicts]}, ensure_ascii=False, indent=1))
    return EXIT_OK if all(v.outcome == "caught" for v in verdicts) else EXIT_MISSED


if __name__ == "__main__":
    sys.exit(main())
