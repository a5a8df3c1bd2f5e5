"""How many signatures and root causes one bug gives: every mutant of the catalogue (mutants/) and
every implementation of tests/one_bug/, checked on the quick budget as ``textbound check`` would:
its own component, and the properties of the other components whose checks call a name it replaces
(a detokenizer's bug shows in stops/pipeline and tools/tokens too; a tokenizer's in the
detokenizer, stops/pipeline, chat's ids and tools/tokens). The distinct signatures are counted, then
grouped into root causes by the evidence a run gathers (textbound.run.evidence: each signature's
smallest example re-run with one name at a time swapped for the oracle's, through the check of the
culprit's own component, and on the catalogue).

A divergence counts only where impl passes the same case (a divergence impl has itself is no
signature of the bug), and oracle disagreements never count. Each implementation is checked on the
embedded families in turn; the table gives the first family its own component diverges on (the
fitting one) and, with ``--all``, the family giving the most root causes too:

    $ python tools/signature_count.py --only detokenizer_unfinished_released
    detokenizer_unfinished_released   detokenizer  gpt2   7 signatures  1 root cause
        detokenizer_unfinished_released: detokenizer/stream/shown a byte run otherwise than the whole decode, ...
    1/1 give 1 to 2 root causes; 7 signatures, 1 root cause in all

Exit status 1 when some implementation gives more than two root causes (or none).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/one_bug's modules, from any folder

from textbound.checks import Subject, case_source, run_check  # noqa: E402
from textbound.families import build_family, embedded_family  # noqa: E402
from textbound.families.embedded import embedded_family_names  # noqa: E402
from textbound.mutants import CATALOGUE  # noqa: E402
from textbound.naming.root_causes import RootCause, root_causes  # noqa: E402
from textbound.naming.signatures import signature_groups  # noqa: E402
from textbound.plan.budget import BUDGETS  # noqa: E402
from textbound.plan.implementation import Implementation  # noqa: E402
from textbound.run.evidence import SUSPECTS, Gatherer, divergence_record, replaced_names  # noqa: E402

MOST_ROOT_CAUSES = 2  # one bug, one root cause, two at most (issues 18 and 37)
ONE_BUG_PACKAGE = "tests.one_bug"
BASE = "textbound.impl"


@dataclass(frozen=True)
class Target:
    """An implementation with one bug and the component whose checks must show it."""

    module: str
    component: str

    @property
    def name(self) -> str:
        return self.module.rsplit(".", 1)[1]

    def properties(self) -> set[tuple[str, str]]:
        """The properties of other components whose checks call a name this implementation replaces."""
        replaced = replaced_names(self)
        return {where for where, names in SUSPECTS.items() if where[0] != self.component
                and any(name.split(".", 1)[0] in replaced for name in names)}


@dataclass
class Count:
    family: str
    records: list[dict] = field(default_factory=list)
    causes: list[RootCause] = field(default_factory=list)

    @property
    def signatures(self) -> set[str]:
        return {r["signature"] for r in self.records}


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
            base = Subject(family, build_family(family), Implementation(BASE))
            self._cases[key] = cases
            self._failing[key] = {n for n, case in enumerate(cases) if run_check(base, case) is not None}
        return self._cases[key], self._failing[key]


def diverging(target: Target, family: str, bases: Bases, properties: set[tuple[str, str]] | None) -> list[dict]:
    """The records of the target's divergences on the family: its own component's (``properties``
    None), or those of the given properties of other components."""
    impl = Implementation(target.module)
    subject = Subject(family, build_family(family), impl)
    components = [target.component] if properties is None else sorted({c for c, _ in properties})
    found = []
    for component in components:
        cases, failing = bases.cases(family, component)
        for number, case in enumerate(cases):
            if number in failing or (properties is not None and (
                    (component, case.property) not in properties or impl.missing_for(component, case.property)
                    or not impl.provides(component))):
                continue  # as a run skips a property the implementation does not provide
            divergence = run_check(subject, case)
            if divergence is not None and not divergence.is_oracle_disagreement:
                found.append(divergence_record(divergence))
    return found


def count(target: Target, family: str, bases: Bases) -> Count:
    found = Count(family, diverging(target, family, bases, None))
    if not found.records:
        return found
    found.records += diverging(target, family, bases, target.properties())
    gatherer = Gatherer(Implementation(target.module), {family: str(build_family(family))})
    evidence = {}
    for group in signature_groups(found.records):
        for signature, seen in gatherer.evidence(group.smallest).items():
            if signature == group.signature or signature not in evidence:
                evidence[signature] = seen
    found.causes = root_causes(found.records, evidence)
    return found


def measure(target: Target, families: list[str], bases: Bases, every_family: bool) -> tuple[Count | None, Count | None]:
    """The first family the target diverges on, and (``every_family``) the one with the most root causes."""
    first = worst = None
    for family in families:
        found = count(target, family, bases)
        if not found.records:
            continue
        first = first or found
        if worst is None or len(found.causes) > len(worst.causes):
            worst = found
        if not every_family:
            break
    return first, worst


def _row(target: Target, found: Count | None) -> str:
    if found is None:
        return f"{target.name:40} {target.component:12} {'-':14} 0  (no divergence on any family)"
    head = (f"{target.name:40} {target.component:12} {found.family:14} {len(found.signatures):3} signatures "
            f"{len(found.causes):3} root causes")
    return "\n".join([head, *(f"    {cause.name}: {', '.join(cause.signatures)}" for cause in found.causes)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="these targets only")
    parser.add_argument("--family", action="append", default=[], metavar="NAME", help="these families only")
    parser.add_argument("--all", action="store_true", help="every family, the one with most root causes shown too")
    args = parser.parse_args(argv)
    targets = [Target(m.module, m.component) for m in CATALOGUE] + one_bug_targets()
    targets = [t for t in targets if not args.only or t.name in args.only]
    families = args.family or embedded_family_names()
    bases, over, signatures, causes = Bases(), [], 0, 0
    for target in targets:
        first, worst = measure(target, families, bases, args.all)
        print(_row(target, first), flush=True)
        if args.all and worst is not None and worst is not first:
            print("  most: " + _row(target, worst), flush=True)
        if first is None or len((worst or first).causes) > MOST_ROOT_CAUSES:
            over.append(target.name)
        signatures += len(first.signatures) if first else 0
        causes += len(first.causes) if first else 0
    print(f"{len(targets) - len(over)}/{len(targets)} give 1 to {MOST_ROOT_CAUSES} root causes"
          + (f"; not: {', '.join(over)}" if over else "") + f"; {signatures} signatures, {causes} root causes in all")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
