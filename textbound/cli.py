"""The ``textbound`` command: check, replay, bench.

Exit codes of ``check``: 0 no divergence beyond the baseline, 1 new divergences, 2 the run could
not be set up (unknown family or component, unimportable --impl, unreadable baseline).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .baseline import BaselineError, load_baseline
from .budget import BUDGETS
from .divergence import COMPONENTS, Case
from .implementation import Implementation, ImplementationError
from .sources import FamilyError, resolve

EXIT_OK, EXIT_DIVERGED, EXIT_SETUP = 0, 1, 2


def _components(value: str) -> list[str]:
    names = [c.strip() for c in value.split(",") if c.strip()]
    unknown = [c for c in names if c not in COMPONENTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown component {', '.join(unknown)} (known: {', '.join(COMPONENTS)})")
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textbound", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def family_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--impl", default="impl", help="module exposing impl's public names (default: impl)")
        sub.add_argument("--family", action="append", default=[], metavar="NAME",
                         help="an embedded family, or a folder name under $TEXTBOUND_MODELS (repeatable)")
        sub.add_argument("--model-dir", action="append", default=[], metavar="DIR",
                         help="a folder with tokenizer.json (+ tokenizer_config.json) (repeatable)")
        sub.add_argument("--hub", action="append", default=[], metavar="REPO",
                         help="a Hugging Face hub repo id whose tokenizer files to fetch (repeatable)")

    check = commands.add_parser("check", help="check an implementation against the oracles")
    family_options(check)
    check.add_argument("--component", type=_components, default=None, metavar="LIST",
                       help=f"comma-separated components of {', '.join(COMPONENTS)} (default: every one with checks)")
    check.add_argument("--budget", choices=sorted(BUDGETS), default="default")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    check.add_argument("--report-dir", type=Path, default=None,
                       help="where to write the report (default: reports/runs/<time>)")
    check.add_argument("--baseline", type=Path, default=None, help="known divergences (JSON)")

    replay = commands.add_parser("replay", help="re-run one recorded case")
    family_options(replay)
    replay.add_argument("case", help="the case as JSON (the 'reproduce' command of a record has it)")

    bench = commands.add_parser("bench", help="speed of impl as a ratio against the oracle")
    family_options(bench)
    bench.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        impl = Implementation(args.impl)
        if args.command == "check":
            return _check(args, impl)
        if args.command == "replay":
            return _replay(args, impl)
        from .bench import run_bench
        return run_bench(impl, resolve(args.family, args.model_dir, args.hub), args.seconds)
    except (ImplementationError, FamilyError, BaselineError) as exc:
        print(f"textbound: {exc}", file=sys.stderr)
        return EXIT_SETUP


def _check(args, impl: Implementation) -> int:
    from .cases import fuzz_families
    from .checks import case_source
    from .checks import checked_components
    from .report import Recorder, RunInfo
    from .runner import run

    budget = BUDGETS[args.budget]
    baseline = load_baseline(args.baseline)
    report_dir = args.report_dir or Path("reports") / "runs" / time.strftime("%Y%m%d-%H%M%S")
    families = resolve(args.family, args.model_dir, args.hub)
    if not (args.family or args.model_dir or args.hub):
        families += fuzz_families(args.seed, budget.fuzz_pipelines, report_dir / "fuzz")
    checked = checked_components()
    unchecked = [c for c in args.component or [] if c not in checked]
    if unchecked:
        print(f"textbound: no checks exist yet for {', '.join(unchecked)} (checked: {', '.join(checked)})",
              file=sys.stderr)
        return EXIT_SETUP
    components = args.component or checked
    oracles = {c: v for c, v in _oracle_versions().items() if c in components}
    info = RunInfo(impl=impl.name, impl_version=impl.version, oracle_versions=oracles,
                   seed=args.seed, budget=budget.name, families={f.name: str(f.path) for f in families})
    recorder = Recorder(report_dir, info)
    verdict = run(impl, families, components, budget, args.seed, max(1, args.jobs), recorder, baseline, case_source)
    print(f"textbound: {sum(t.cases for t in recorder.tally.values())} cases on {len(families)} families "
          f"in {verdict['seconds']} s; new divergences: {len(verdict['new'])}, baselined: {len(verdict['known'])}, "
          f"fixed: {len(verdict['fixed'])}; report: {report_dir / 'report.md'}")
    for signature in verdict["new"]:
        print(f"  NEW {signature}")
    for entry in verdict["fixed"]:
        print(f"  FIXED (remove from baseline) {entry['signature']} on {entry['family']}")
    for note in recorder.notes:
        print(f"  note: {note}")
    return EXIT_DIVERGED if verdict["new"] or verdict["errors"] else EXIT_OK


def _oracle_versions() -> dict[str, str]:
    from oracles import versions
    return versions()


def _replay(args, impl: Implementation) -> int:
    from .checks import Subject, run_check
    families = resolve(args.family, args.model_dir, args.hub)
    if len(families) != 1:
        raise FamilyError("replay needs exactly one --family, --model-dir or --hub")
    try:
        case = Case.from_json(args.case)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"textbound: the case is not valid: {exc}", file=sys.stderr)
        return EXIT_SETUP
    divergence = run_check(Subject(families[0].name, families[0].path, impl), case)
    if divergence is None:
        print("no divergence: impl agrees with the oracle on this case")
        return EXIT_OK
    print(divergence.describe())
    return EXIT_DIVERGED


if __name__ == "__main__":
    sys.exit(main())
