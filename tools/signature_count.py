"""How many signatures one bug gives: every mutant of the catalogue (mutants/) and every
implementation of tests/one_bug/, checked on the quick budget of its component as ``textbound
check`` would, the distinct signatures counted over the whole component (every property).

A divergence counts only where impl passes the same case (a divergence impl has itself is no
signature of the bug), and oracle disagreements never count. Each implementation is checked on the
embedded families in turn; the table gives the first family it diverges on (the fitting one) and,
with ``--all``, the family giving the most signatures too:

    $ python tools/signature_count.py --only stops_within_delta
    stops_within_delta          stops        gpt2          1  stops/stream/missed a stop

Exit status 1 when some implementation gives more than two signatures (or none).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from textbound.checks import Subject, case_source, run_check
from textbound.families import build_family, embedded_family
from textbound.families.embedded import embedded_family_names
from textbound.mutants import CATALOGUE
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation

MOST_SIGNATURES = 2  # one bug, one signature, two at most (issue 18)
ONE_BUG_PACKAGE = "tests.one_bug"


@dataclass(frozen=True)
class Target:
    """An implementation with one bug and the component whose checks must show it."""

    module: str
    component: str

    @property
    def name(self) -> str:
        return self.module.rsplit(".", 1)[1]


@dataclass
class Count:
    family: str
    signatures: set[str] = field(default_factory=set)


def one_bug_targets() -> list[Target]:
    """tests/one_bug/'s implementations, by the component ``COMPONENTS`` names for each."""
    from tests.one_bug import COMPONENTS
    return [Target(f"{ONE_BUG_PACKAGE}.{name}", component) for name, component in sorted(COMPONENTS.items())]


class Bases:
    """impl's failing cases per (family, component), found once: a case impl fails counts for no bug."""

    def __init__(self):
        self._cases: dict[tuple[str, str], list] = {}
        self._failing: dict[tuple[str, str], set[int]] = {}

    def cases(self, family: str, component: str) -> tuple[list, set[int]]:
        key = (family, component)
        if key not in self._cases:
            cases = list(case_source(embedded_family(family), component, BUDGETS["quick"], 0))
            base = Subject(family, build_family(family), Implementation("impl"))
            self._cases[key] = cases
            self._failing[key] = {n for n, case in enumerate(cases) if run_check(base, case) is not None}
        return self._cases[key], self._failing[key]


def count(target: Target, family: str, bases: Bases) -> Count:
    cases, failing = bases.cases(family, target.component)
    subject = Subject(family, build_family(family), Implementation(target.module))
    found = Count(family)
    for number, case in enumerate(cases):
        if number in failing:
            continue
        divergence = run_check(subject, case)
        if divergence is not None and not divergence.is_oracle_disagreement:
            found.signatures.add(divergence.signature)
    return found


def measure(target: Target, families: list[str], bases: Bases, every_family: bool) -> tuple[Count | None, Count | None]:
    """The first family the target diverges on, and (``every_family``) the one with the most signatures."""
    first = worst = None
    for family in families:
        found = count(target, family, bases)
        if not found.signatures:
            continue
        first = first or found
        if worst is None or len(found.signatures) > len(worst.signatures):
            worst = found
        if not every_family:
            break
    return first, worst


def _row(target: Target, found: Count | None) -> str:
    if found is None:
        return f"{target.name:40} {target.component:12} {'-':14} 0  (no divergence on any family)"
    signatures = sorted(found.signatures)
    head = f"{target.name:40} {target.component:12} {found.family:14} {len(signatures)}  "
    return head + ("\n" + " " * len(head)).join(signatures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="these targets only")
    parser.add_argument("--family", action="append", default=[], metavar="NAME", help="these families only")
    parser.add_argument("--all", action="store_true", help="every family, the one with most signatures shown too")
    args = parser.parse_args(argv)
    targets = [Target(m.module, m.component) for m in CATALOGUE] + one_bug_targets()
    targets = [t for t in targets if not args.only or t.name in args.only]
    families = args.family or embedded_family_names()
    bases, over = Bases(), []
    for target in targets:
        first, worst = measure(target, families, bases, args.all)
        print(_row(target, first), flush=True)
        if args.all and worst is not None and worst is not first:
            print("  most: " + _row(target, worst), flush=True)
        if first is None or len((worst or first).signatures) > MOST_SIGNATURES:
            over.append(target.name)
    print(f"{len(targets) - len(over)}/{len(targets)} give 1 to {MOST_SIGNATURES} signatures"
          + (f"; not: {', '.join(over)}" if over else ""))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
