"""The options and the run of ``textbound compare OLD NEW`` (cli.py's subcommand adds these).

Exit codes: 0 nothing changed beyond --allow, 1 some change is not allowed, 2 bad input (OLD or NEW
missing or unreadable, an unreadable --allow file), with one line saying what and where.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from textbound.oracles.remote import RemoteOracleError, RemoteOracles

from ..naming.baseline import BaselineError, load_baseline
from ..one_line import one_line
from ..plan.budget import BUDGETS, add_budget_option
from ..plan.oracle_env import PipError
from .changes import apply_allow
from .gate import COMPARED_COMPONENTS, compare
from .oracle_versions import overlay, parse_sides
from .report import build_summary, write_reports
from .version import CompareError, FamilyVersion, load_version

EXIT_SAME, EXIT_CHANGED, EXIT_BAD_INPUT = 0, 1, 2


def _components(value: str) -> list[str]:
    names = [c.strip() for c in value.split(",") if c.strip()]
    unknown = [c for c in names if c not in COMPARED_COMPONENTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown component {', '.join(unknown) or value!r} "
                                         f"(compared: {', '.join(COMPARED_COMPONENTS)})")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, metavar="OLD", help="the family folder users have now")
    parser.add_argument("new", type=Path, nargs="?", default=None, metavar="NEW",
                        help="the family folder they would get (none with --oracle-versions)")
    parser.add_argument("--component", type=_components, default=list(COMPARED_COMPONENTS), metavar="LIST",
                        help=f"comma-separated components of {', '.join(COMPARED_COMPONENTS)} (default: all)")
    add_budget_option(parser, "default")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the seed of the cases (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="accepted as check takes it; compare runs its cases in one process (default: %(default)s)")
    parser.add_argument("--report-dir", type=Path, default=None, metavar="DIR",
                        help="where to write the report (default: reports/compare/<time>)")
    parser.add_argument("--oracle-versions", type=parse_sides, default=None, metavar="A,B",
                        help="compare OLD under two versions of the oracle libraries, e.g. "
                             "tokenizers==0.22.1,tokenizers==0.23.3 (a side may join pins with +; default: none, "
                             "OLD and NEW under the installed ones)")
    parser.add_argument("--allow", type=Path, default=None, metavar="FILE",
                        help='changes accepted, each with a reason: {"entries": [{"signature", "reason"[, "family"]}]} '
                             '(default: none)')


def run_command(args: argparse.Namespace, argv: list[str]) -> int:
    """``textbound compare`` with parsed ``args``; ``argv`` is the command line reports show."""
    started = time.monotonic()
    remotes: list[RemoteOracles] = []
    try:
        allow = load_baseline(args.allow, "--allow")
        if (args.new is None) == (args.oracle_versions is None):
            raise CompareError("give OLD and NEW, or one family with --oracle-versions A,B")
        if args.oracle_versions:
            for pins in args.oracle_versions:
                remotes.append(RemoteOracles(args.old, overlay(pins)))
            old, new = load_version("old", args.old, remotes[0]), load_version("new", args.old, remotes[1])
        else:
            old, new = load_version("old", args.old), load_version("new", args.new)
    except (CompareError, BaselineError, PipError, RemoteOracleError) as exc:
        print(f"textbound compare: {one_line(exc)}", file=sys.stderr)
        _close(remotes)
        return EXIT_BAD_INPUT
    try:
        return _compare(args, argv, started, old, new, allow)
    finally:
        _close(remotes)


def _close(remotes: list[RemoteOracles]) -> None:
    for remote in remotes:
        remote.close()


def _compare(args: argparse.Namespace, argv: list[str], started: float, old: FamilyVersion, new: FamilyVersion,
             allow: dict) -> int:
    budget = BUDGETS[args.budget]
    comparison = compare(old, new, budget, args.seed, args.component)
    unused = apply_allow(comparison.changes, allow)
    from textbound.oracles import versions
    references = {c: v for c, v in versions().items() if c in args.component}
    if old.remote:
        references = {v.label: ", ".join(f"{package} {n}" for package, n in v.remote.versions.items()) for v in (old, new)}
    run = {"budget": budget.name, "seed": args.seed, "components": args.component, "oracles": references,
           "seconds": round(time.monotonic() - started, 1)}
    summary = build_summary(old, new, comparison, run, unused)
    report_dir = args.report_dir or Path("reports") / "compare" / time.strftime("%Y%m%d-%H%M%S")
    write_reports(report_dir, summary, ["textbound", *argv])
    changed = [c for c in comparison.changes if c.allowed is None]
    print(f"textbound compare: {sum(comparison.cases.values())} cases; {len(changed)} change(s), "
          f"{len(comparison.changes) - len(changed)} allowed; report: {report_dir / 'report.md'}")
    for signature in sorted({c.signature for c in changed}):
        subjects = [c.subject for c in changed if c.signature == signature]
        more = f" and {len(subjects) - 1} more" if len(subjects) > 1 else ""
        print(f"  CHANGED {signature}: {subjects[0]}{more}")
    for entry in unused:
        print(f"  UNUSED --allow entry (remove it) {entry['signature']}")
    return EXIT_CHANGED if changed else EXIT_SAME
