"""textbound's pytest plugin: an engine's own test suite runs the conformance checks as its items.

It is off unless an implementation is named, on the command line or in the ini file::

    pytest --textbound-impl mymod --textbound-family gpt2 --textbound-component stops -n 2

    [pytest]                 # or the same as ini options
    textbound_impl = mymod
    textbound_family = gpt2 llama2

and then adds one item per family × component × property, ``textbound[gpt2-stops-stream]``, which
checks that property's cases (those ``textbound check`` builds for the budget and seed) in the pytest
process, each case under the case timeout (textbound.run.pool.check_job with in-process limits).
Under pytest-xdist the items spread over the workers, and each worker loads a family once. An item

- passes when every case agrees with the oracle (an oracle disagreement is not impl's);
- fails with its root causes (``root_causes``), each one's smallest example, minimized, and the
  command that replays it;
- xfails when every divergence is in the baseline, giving the entries' reasons; an entry of the
  item's family and property that matched nothing fails it, as the gate counts the entry fixed.
  Entries spanning items (family "*", or a tokenizer.json reading, which shows in any property)
  are judged at the end of the session, and one that matched nothing fails the session;
- is skipped, saying why, when the implementation lacks the names of the property, or the budget
  builds no case of it on the family.

A configuration that cannot be used (an unknown family, a module that does not import) is one line
and pytest's usage error, exit code 4.

pytest imports this module in every session, so the harness is imported only once the plugin is
asked for; then it may import every package (``triage`` names the root causes).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported where used: pytest loads this module in every session
    from .families import Family
    from .naming.baseline import BaselineEntry
    from .naming.divergence import Case, Divergence
    from .run.pool import Limits
    from .run.runner import Plan
    from .naming.root_causes import RootCause

ITEM_PREFIX = "textbound"  # items are textbound[FAMILY-COMPONENT-PROPERTY]: -k textbound selects them
DEFAULT_BUDGET = "default"  # as ``textbound check``
SHOWN_CHARACTERS = 400  # of an expected or actual value in a failure report


@dataclass(frozen=True)
class Option:
    """A setting given as ``--textbound-NAME`` or as the ini option ``textbound_NAME``."""

    name: str
    metavar: str
    help: str
    repeatable: bool = False

    @property
    def flag(self) -> str:
        return f"--textbound-{self.name}"

    @property
    def ini(self) -> str:
        return f"textbound_{self.name.replace('-', '_')}"


OPTIONS = {option.name: option for option in (
    Option("impl", "MODULE", "check this module (or .py file) exposing impl's public names; without it the "
                             "plugin is off"),
    Option("family", "NAME", "a family to check: embedded, or a folder under $TEXTBOUND_MODELS (repeatable; "
                             "ini: names separated by spaces)", repeatable=True),
    Option("component", "LIST", "comma-separated components (default: every one with checks)"),
    Option("budget", "NAME", f"quick, default or deep (default: {DEFAULT_BUDGET})"),
    Option("baseline", "FILE", "known divergences, JSON (in the ini file: relative to it)"),
    Option("seed", "N", "seed of the generated cases (default: 0)"),
    Option("case-timeout", "SECONDS", "a case running longer is a divergence 'timed out' (default: textbound "
                                      "check's)"),
)}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("textbound", "textbound conformance checks (docs/pytest.md)")
    for option in OPTIONS.values():
        group.addoption(option.flag, dest=option.ini, metavar=option.metavar, help=option.help,
                        action="append" if option.repeatable else "store", default=None)
        parser.addini(option.ini, option.help, type="args" if option.repeatable else "string")


@dataclass(frozen=True)
class Setting:
    """An option's value and where it was given, to name it in an error: ``--textbound-budget`` or
    ``textbound_budget in /path/pytest.ini``."""

    value: object
    where: str
    in_ini: bool = False


def _setting(config: pytest.Config, name: str) -> Setting:
    option = OPTIONS[name]
    given = config.getoption(option.ini)
    if given is not None:
        return Setting(given, option.flag)
    if value := config.getini(option.ini):
        return Setting(value, f"{option.ini} in {config.inipath}", in_ini=True)
    return Setting(value, f"{option.flag} (or {option.ini} in the ini file)")


def _ini_relative(config: pytest.Config, given: Setting) -> str:
    """A path given in the ini file is relative to the ini file's folder; on the command line, to the
    current folder."""
    return str(Path(config.inipath).parent / given.value) if given.in_ini else given.value


@dataclass
class Checking:
    """What a pytest process checks: the run's plan (impl, families, components, budget, seed,
    baseline) and the case timeout, with what the process loads once: each family's subject (impl's
    and the oracle's tokenizers), and the cases of the family × component it checked last (items come
    in that order, and one list of them is all a process keeps)."""

    plan: Plan
    limits: Limits
    subjects: dict = field(default_factory=dict)  # family name -> its checks.Subject, loaded
    last_cases: tuple = ((), {})  # ((family, component), {property: [Case, ...]})

    @property
    def families(self) -> dict[str, str]:
        """Family name -> folder, as records and the explanation name families."""
        return {family.name: str(family.path) for family in self.plan.families}

    def subject(self, family: Family):
        from .checks import Subject
        from .run.pool import loaded
        if family.name not in self.subjects:
            self.subjects[family.name] = loaded(Subject(family.name, family.path, self.plan.impl))
        return self.subjects[family.name]

    def property_cases(self, family: Family, component: str) -> dict[str, list[Case]]:
        """The cases of ``component`` on ``family``, by property; a case of a property no item checks (a
        builder and the checks' sources disagreeing) stops the item, never is left unchecked."""
        from .checks import case_source, properties
        if self.last_cases[0] != (family.name, component):
            source = self.plan.impl.source
            by_property: dict[str, list[Case]] = {prop: [] for prop in properties(component, source)}
            for case in case_source(family, component, self.plan.budget, self.plan.seed, source=source):
                if case.property not in by_property:
                    raise RuntimeError(f"the {source} case builder of {component} made a case of {case.property}, "
                                       f"which no item checks (the check's sources lack {source})")
                by_property[case.property].append(case)
            self.last_cases = ((family.name, component), by_property)
        return self.last_cases[1]


def _checking_of(config: pytest.Config) -> Checking | None:
    """The checking the options ask for, or None when no implementation is named; an unusable option
    raises pytest.UsageError, one line naming it."""
    impl = _setting(config, "impl")
    if not impl.value:
        return None
    from .families import FamilyError
    from .files import InputFileError
    from .naming.baseline import BaselineError
    from .one_line import one_line
    from .plan.implementation import ImplementationError
    try:
        return _planned(config, impl)
    except (ImplementationError, FamilyError, BaselineError, InputFileError, ValueError) as exc:
        raise pytest.UsageError(f"textbound: {one_line(exc)}") from None


def _planned(config: pytest.Config, impl: Setting) -> Checking:
    from .checks import checked_components
    from .cli import positive_seconds, within
    from .families import FamilyError, resolve
    from .naming.baseline import load_baseline
    from .naming.divergence import COMPONENTS
    from .plan.budget import BUDGETS
    from .plan.implementation import Implementation, ImplementationError, is_file_path
    from .run.pool import DEFAULT_CASE_TIMEOUT, Limits
    from .run.runner import Plan

    if impl.in_ini and not is_file_path(impl.value) and str(config.inipath.parent) not in sys.path:
        sys.path.append(str(config.inipath.parent))  # a module named in the ini file is found beside it
    try:
        implementation = Implementation(_ini_relative(config, impl) if is_file_path(impl.value) else impl.value)
    except ImplementationError as exc:  # named as the user gave it, not as textbound check's --impl
        raise ImplementationError(f"{impl.where}: {str(exc).removeprefix('--impl ')}") from None
    families = _setting(config, "family")
    if not families.value:
        raise FamilyError(f"{families.where}: name at least one family to check (an embedded one, such as gpt2, "
                          "or a folder under $TEXTBOUND_MODELS)")
    try:
        resolved = resolve(families.value, [], [])
    except FamilyError as exc:
        raise FamilyError(f"{families.where}: {exc}") from None
    budget = _setting(config, "budget")
    if (budget.value or DEFAULT_BUDGET) not in BUDGETS:
        raise ValueError(f"{budget.where}: {budget.value!r} is not a budget (known: {', '.join(BUDGETS)})")
    given = _setting(config, "component")
    names = [c.strip() for c in (given.value or "").split(",") if c.strip()] or checked_components()
    if unknown := [c for c in names if c not in COMPONENTS]:
        raise ValueError(f"{given.where}: unknown component {', '.join(unknown)} (known: {', '.join(COMPONENTS)})")
    if unchecked := [c for c in names if c not in checked_components()]:
        raise ValueError(f"{given.where}: no checks exist yet for {', '.join(unchecked)}")
    if not any(map(implementation.provides, names)):  # items that all skip must not pass as a gate
        lacking = "; ".join(f"{c} (missing {', '.join(implementation.missing(c))})" for c in names)
        raise ValueError(f"{impl.where}: {implementation.name} provides none of the components checked: {lacking}")
    baseline = _setting(config, "baseline")
    entries = load_baseline(Path(_ini_relative(config, baseline)) if baseline.value else None, baseline.where)
    seed = _converted(_setting(config, "seed"), within(int, lambda n: True, "a whole number"), 0)
    timeout = _converted(_setting(config, "case-timeout"), positive_seconds, DEFAULT_CASE_TIMEOUT)
    plan = Plan(implementation, resolved, names, BUDGETS[budget.value or DEFAULT_BUDGET], seed, baseline=entries)
    return Checking(plan, Limits(case_timeout=timeout))


def _converted(given: Setting, convert, default):
    """``convert(given.value)`` (an argparse type of textbound's command line), ``default`` when not given;
    ValueError naming the option when it refuses the value."""
    from argparse import ArgumentTypeError
    if given.value in (None, ""):
        return default
    try:
        return convert(given.value)
    except ArgumentTypeError as exc:
        raise ValueError(f"{given.where}: {exc}") from None


def pytest_configure(config: pytest.Config) -> None:
    checking = _checking_of(config)
    if checking is not None:
        config.pluginmanager.register(TextboundSession(checking), "textbound-session")


# -- an item: one property of one component on one family ----------------------------------------


@dataclass
class PropertyResult:
    """What checking one property on one family found: its cases' divergences, the cases checked, the
    error that stopped it, or why nothing was checked (``skipped``: the budget builds no case)."""

    cases: int = 0
    found: list[Divergence] = field(default_factory=list)  # minimized where they were
    error: str | None = None
    skipped: str | None = None


def _not_provided(impl, component: str, prop: str) -> str | None:
    """Why the implementation cannot be checked on ``prop`` (the names it lacks), or None."""
    if missing := list(dict.fromkeys(impl.missing(component) + impl.missing_for(component, prop))):
        return f"not provided by {impl.name} (missing {', '.join(missing)})"
    return None


def checked_property(checking: Checking, family: Family, component: str, prop: str) -> PropertyResult:
    """``prop`` of ``component`` checked on ``family`` in this process, as a worker checks a chunk
    (check_job), each case under the case timeout; a case that timed out is then judged as the run
    judges one (checked alone in a worker, then without impl: judged_stuck):

        >>> result = checked_property(checking_stops_within_delta, gpt2, "stops", "pipeline")
        >>> result.cases, sorted({d.signature for d in result.found}), result.error
        (122, ['stops/pipeline/releases text that may begin a stop'], None)
    """
    from .run.pool import JobRun, Task, check_job

    cases = checking.property_cases(family, component)[prop]
    if not cases:
        return PropertyResult(skipped=f"the {checking.plan.budget.name} budget builds no {component}/{prop} case "
                                      f"on {family.name}")
    sent: list[tuple] = []
    end, error, slowest = check_job(checking.subject(family), Task(family, component, cases),
                                    JobRun(0, True, [0.0] * 4, sent.append, limits=checking.limits))
    found = [divergence for kind, _, divergence in sent if kind == "divergence"]
    stuck = [divergence for kind, _, divergence in sent if kind == "stuck"]
    return PropertyResult(end, found + _judged_stuck(checking, family, stuck, slowest[0]), error)


def _judged_stuck(checking: Checking, family: Family, stuck: list[Divergence],
                  slowest_answered: float) -> list[Divergence]:
    """The timed-out cases as the run records them: the first one checked again alone in a fresh worker
    (textbound.run.pool.judged_stuck: the oracle's failure when it hangs without impl too, else
    minimized); the others as they were found, since the first already fails the item."""
    if not stuck:
        return []
    from .run.pool import Pool, judged_stuck, retry_limits
    pool = Pool(checking.plan.impl.name, 1, checking.limits)
    try:
        pool.retry = retry_limits(checking.limits, slowest_answered)
        return [judged_stuck(pool, family, stuck[0], set()), *stuck[1:]]
    finally:
        pool.close()


@dataclass
class ItemVerdict:
    """One property's divergences judged against the baseline: ``new`` ones fail the item, ``known``
    ones (each with the entry it matched) xfail it, ``fixed`` entries of its own that matched nothing
    fail it; ``matched`` are every entry some divergence matched, for entries spanning items."""

    new: list[Divergence] = field(default_factory=list)
    known: list[tuple[Divergence, BaselineEntry]] = field(default_factory=list)
    fixed: list[BaselineEntry] = field(default_factory=list)

    @property
    def matched(self) -> list[BaselineEntry]:
        return list(dict.fromkeys(entry for _, entry in self.known))

    @property
    def failed(self) -> bool:
        return bool(self.new or self.fixed)


def _scope(entry) -> tuple[str, str]:
    """The component and property a baseline entry's signature names:
    ``_scope(BaselineEntry("stops/stream/missed a stop", "gpt2", "...")) == ("stops", "stream")``."""
    component, prop, *_ = [*entry.signature.split("/", 2), "", ""]
    return component, prop


def _owns(entry, family: str, component: str, prop: str) -> bool:
    """Whether a baseline entry is one item's alone, so that item fails when it matches nothing: an entry
    of one family and one property (``tokenizer/encode/...`` on gpt2), not one spanning families ("*") or
    properties (``tokenizer/tokenizer.json/...``: a reading shows in any property)."""
    return (entry.family, *_scope(entry)) == (family, component, prop)


def judged(result: PropertyResult, baseline: tuple[BaselineEntry, ...], family: str, component: str,
           prop: str) -> ItemVerdict:
    """``result``'s divergences of impl split into new and known (oracle disagreements are neither), and
    the entries of this item that matched nothing (fixed):

        >>> entry = BaselineEntry("stops/stream/missed a stop", "gpt2", "issue 12")
        >>> verdict = judged(PropertyResult(244, [missed_a_stop_on_gpt2]), (entry,), "gpt2", "stops", "stream")
        >>> len(verdict.new), verdict.matched, verdict.fixed
        (0, [entry], [])
        >>> judged(PropertyResult(244, []), (entry,), "gpt2", "stops", "stream").fixed
        [entry]
    """
    verdict = ItemVerdict()
    for divergence in result.found:
        if divergence.is_oracle_disagreement:  # two references disagree: not impl's
            continue
        entry = next((e for e in baseline if e.matches(divergence)), None)
        if entry is None:
            verdict.new.append(divergence)
        else:
            verdict.known.append((divergence, entry))
    matched = set(verdict.matched)
    verdict.fixed = [e for e in baseline if _owns(e, family, component, prop) and e not in matched]
    return verdict


def root_causes(records: list[dict], families: dict[str, str], impl_name: str) -> list[RootCause]:
    """The root causes of one item's divergences (records as divergences.jsonl holds them), the most
    frequent first, grouped as a run groups them (textbound.run.evidence.find_root_causes: each
    signature's smallest example re-run with the implementation's names swapped for the oracle's, and
    on the catalogue); each cause has its ``name``, ``signatures``, ``records``, ``smallest`` example
    and ``mutants`` (the catalogue's explanation, empty where none reproduces it):

        >>> [(c.signatures, list(c.mutants)) for c in root_causes(records, families, "textbound.mutants.stops_within_delta")]
        [(['stops/stream/releases text that may begin a stop'], ['stops_within_delta'])]
    """
    from .run.evidence import find_root_causes
    return find_root_causes(records, impl_name, families)


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS] + f"... ({len(text):,} characters)"


def _failure_report(checking: Checking, title: str, result: PropertyResult, verdict: ItemVerdict) -> str:
    """What a failing item says: how many cases diverged, each root cause with its explanation, its
    smallest example aligned and its replay command; the baseline's entries it matched or found
    fixed; and the harness error that stopped it."""
    from textbound.mutants import BY_NAME

    from .records.report import RunInfo, record_line
    from .triage.explanation import explanation_line

    plan, families = checking.plan, checking.families
    info = RunInfo(impl=plan.impl.name, impl_version=plan.impl.version, oracle_versions={}, seed=plan.seed,
                   budget=plan.budget.name, families=families)
    records = [json.loads(record_line(divergence, info)) for divergence in verdict.new]
    causes = root_causes(records, families, plan.impl.name) if records else []
    lines = [f"{title}: {len({r['digest'] for r in records})} of the {result.cases} case(s) checked diverge from "
             f"the oracle beyond the baseline, {len(causes)} root cause(s)" if records else f"{title}: no new divergence"]
    for number, cause in enumerate(causes, 1):
        smallest = cause.smallest
        lines += ["", f"{number}. {' + '.join(cause.signatures)} ({cause.cases} case(s))",
                  f"   {explanation_line([BY_NAME[name] for name in cause.mutants])}",
                  f"   smallest example{'' if 'minimization' in smallest['first_difference'] else ', minimized'} "
                  f"({smallest['signature']}): {_shown(smallest['minimized_input'])}",
                  f"   expected {_shown(smallest['expected'])}", f"   actual   {_shown(smallest['actual'])}",
                  *_aligned(smallest, families),
                  f"   first difference {_shown(smallest['first_difference'])}",
                  f"   replay: {smallest['reproduce']}"]
    lines += [f"fixed: the baseline entry {entry.signature} on {entry.family} ({entry.reason}) matched none of "
              f"the {result.cases} case(s): remove it from the baseline" for entry in verdict.fixed]
    if verdict.known:
        lines.append(f"baselined: {len(verdict.known)} divergence(s) of " +
                     "; ".join(f"{entry.signature} ({entry.reason})" for entry in verdict.matched))
    if result.error:
        lines.append(f"harness error: {result.error}")
    return "\n".join(lines)


def _aligned(record: dict, families: dict[str, str]) -> list[str]:
    """The record's expected and actual aligned (ids with their pieces, texts by character); of two
    plain values, only where in the values they differ, the lines above showing both."""
    from .records.alignment import record_alignment, render_alignment
    alignment = record_alignment(record, families)
    if alignment.columns == ("value",):
        return [f"   at {alignment.path}"] if alignment.path else []
    return render_alignment(alignment)


class PropertyFailed(Exception):
    """An item's property diverged beyond the baseline, or a baseline entry of its own is fixed."""


@dataclass
class ItemRecord:
    """What an item tells the session (through its report, also from an xdist worker): whether it
    checked its cases (``reached``; not when skipped as not provided) and the baseline entries its
    divergences matched, as (signature, family, reason)."""

    family: str
    component: str
    prop: str
    reached: bool = False
    matched: list = field(default_factory=list)


class PropertyItem(pytest.Item):
    """``textbound[FAMILY-COMPONENT-PROPERTY]``: one property of one component checked on one family."""

    def __init__(self, *, family: Family, component: str, prop: str, checking: Checking, **kwargs):
        super().__init__(**kwargs)
        self.family, self.component, self.prop, self.checking = family, component, prop, checking
        self.record = ItemRecord(family.name, component, prop)
        self.failure = ""

    def runtest(self) -> None:
        result = checked_property(self.checking, self.family, self.component, self.prop)
        self.record.reached = True  # it checked its cases, or there are none
        if result.skipped:
            pytest.skip(result.skipped)
        verdict = judged(result, self.checking.plan.baseline, self.family.name, self.component, self.prop)
        self.record.matched = [(e.signature, e.family, e.reason) for e in verdict.matched]
        if verdict.failed or result.error:
            self.failure = _failure_report(self.checking, self.where, result, verdict)
            raise PropertyFailed(self.failure)
        if verdict.known:
            pytest.xfail("; ".join(f"{entry.signature}: {entry.reason}" for entry in verdict.matched))

    @property
    def where(self) -> str:
        return f"{self.family.name} {self.component}/{self.prop}"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, PropertyFailed):
            return self.failure
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"{ITEM_PREFIX} {self.where}"  # a line, where pytest shows a skip: the file's first


# -- the session: items in, entries spanning items judged at its end ------------------------------


class TextboundSession:
    """The plugin's hooks once it is asked for: it adds the items, and (in the process that gathers
    the reports: xdist's controller, or the only one) judges the baseline entries spanning items."""

    def __init__(self, checking: Checking):
        self.checking = checking
        self.records: list[ItemRecord] = []
        self.fixed: list[BaselineEntry] = []

    @pytest.hookimpl(tryfirst=True)  # before -k and -m deselect
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list) -> None:
        from .checks import properties
        plan = self.checking.plan
        names = [(family, component, prop, f"{ITEM_PREFIX}[{family.name}-{component}-{prop}]")
                 for family in plan.families for component in plan.components
                 for prop in properties(component, plan.impl.source)]
        # The session is their parent, their node id their name (not "::textbound[...]"), and their file
        # the one that configured them, where pytest shows one of them skipped.
        where = Path(session.config.inipath or session.path)
        added = [PropertyItem.from_parent(session, name=name, nodeid=name, path=where, family=family,
                                          component=component, prop=prop, checking=self.checking)
                 for family, component, prop, name in names]
        for item in added:
            if reason := _not_provided(plan.impl, item.component, item.prop):
                item.add_marker(pytest.mark.skip(reason=reason))
        # Reported as a collector's result, so that "collected N items" counts them.
        session.config.hook.pytest_collectreport(report=pytest.CollectReport(ITEM_PREFIX, "passed", None, added))
        items.extend(added)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        report = yield
        if isinstance(item, PropertyItem) and (call.when == "call" or report.skipped):  # skipped: not provided
            report.textbound = vars(item.record)  # plain data: an xdist worker sends it to the controller
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, "textbound", None):
            self.records.append(ItemRecord(**report.textbound))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):  # an xdist worker: the controller has every report
            return
        self.fixed = spanning_fixed(self.checking.plan, self.records)
        if self.fixed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.fixed:
            terminalreporter.section("textbound: baseline entries fixed", red=True)
            for entry in self.fixed:
                terminalreporter.line(f"FIXED (remove from baseline) {entry.signature} on {entry.family}: "
                                      f"{entry.reason}")


def spanning_fixed(plan: Plan, records: list[ItemRecord]) -> list[BaselineEntry]:
    """The baseline entries spanning items (family "*", or a tokenizer.json reading) that matched
    nothing where they could have: an entry of a property, on an item of it that checked its cases;
    a tokenizer.json reading, on a family all of whose items of the component ran, one checking cases.
    An entry none of the items run could match (deselected, not provided) is not judged:

        >>> entry = BaselineEntry("stops/stream/missed a stop", "*", "issue 12")
        >>> spanning_fixed(plan, [ItemRecord("gpt2", "stops", "stream", reached=True)])
        [entry]
        >>> spanning_fixed(plan, [ItemRecord("gpt2", "stops", "pipeline", reached=True)])   # -k pipeline
        []
    """
    from .checks import properties
    matched = {tuple(entry) for record in records for entry in record.matched}
    reached = {(r.family, r.component, r.prop) for r in records if r.reached}
    ran = {(r.family, r.component, r.prop) for r in records}
    fixed = []
    for entry in plan.baseline:
        component, prop = _scope(entry)
        families = [f.name for f in plan.families if entry.family in ("*", f.name)]
        if (entry.signature, entry.family, entry.reason) in matched or any(
                _owns(entry, family, component, prop) for family in families):
            continue  # matched, or its item judges it
        props = properties(component, plan.impl.source)
        if prop in props:
            judged_here = any((family, component, prop) in reached for family in families)
        else:
            judged_here = any(all((family, component, p) in ran for p in props)
                              and any((family, component, p) in reached for p in props) for family in families)
        if judged_here:
            fixed.append(entry)
    return fixed
