"""The textbound command: an LLM server's text boundary checked against Hugging Face's references.

Commands: check, replay, families, init, bench, triage, diff, baseline, merge, mutate, compare,
explain; ``textbound --version`` names textbound's version and the oracles'; ``python -m textbound``
is the same command. docs/cli.md holds every command's ``--help``, written by tools/cli_docs.py.

Exit codes of ``check``: 0 no divergence beyond the baseline, 1 new divergences, 2 the run could
not be set up (unknown family or component, unimportable --impl or one that cannot load a family,
unreadable baseline, an option out of its range, a --report-dir that is a file, --server beside
--impl), 128 + the signal's number when interrupted (130 for Ctrl-C, 143 for SIGTERM; the report is
written first).
``check`` and ``replay`` judge with the oracle libraries installed here when they are the supported
versions; older ones (an engine's pins) judge nothing: the command runs again in an oracle
environment, the --impl served from here (textbound.plan.oracle_env), and exits as it does there.
``--server URL [--server-dialect D] [--model NAME]`` is ``--impl textbound.adapters.server`` with its
environment (SERVER_ENV) set for the run, so every worker process reaches the same server.
``diff`` exits 1 when NEW has signatures OLD had not. ``mutate`` (textbound.run.mutate) exits 0 when
every mutant of mutants/ is caught, 1 when some are missed, 2 when the run could not be set up.
``compare`` (textbound.compare) exits 0 when nothing changed beyond --allow, 1 on changes, 2 on bad input;
``explain`` (textbound.triage.explain) 0 when impl agrees with the oracle, 1 when it differs, 2 on bad input.
``replay`` (textbound.run.replay) 0 when impl agrees, 1 when it diverges, 2 when the case or its family
cannot be used. ``init`` (textbound.adapters.skeleton) 2 when its file exists already.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

from textbound.oracles import MissingExtra

from .families import FamilyError, fuzz_families, resolve
from .files import InputFileError
from .naming.baseline import BaselineEntry, BaselineError, load_baseline
from .naming.divergence import COMPONENTS
from .one_line import one_line
from .plan.budget import BUDGETS, add_budget_option
from .plan.implementation import DEFAULT_IMPL, JSONL_ADAPTER, SERVER, FamilyUnloadable, Implementation, ImplementationError
from .plan.oracle_env import OracleEnvError, judge_apart, oracles_apart
from .records.merge import MergeError
from .records.report import setup_failure_markdown
from .records.run_folder import RunFolderError
from .run.mutate import add_arguments as add_mutate_arguments
from .run.mutate import run_command as run_mutate
from .run.pool import DEFAULT_CASE_TIMEOUT, LimitError
from .run.runner import Shard
from .server.dialect import CONCURRENCY_RANGE, DIALECTS

EXIT_OK, EXIT_DIVERGED, EXIT_SETUP = 0, 1, 2
SERVER_ADAPTER = "textbound.adapters.server"
# What textbound.adapters.server reads, by the option that sets it.
SERVER_ENV = {"server": "TEXTBOUND_SERVER_URL", "server_dialect": "TEXTBOUND_SERVER_DIALECT",
              "model": "TEXTBOUND_SERVER_MODEL", "server_concurrency": "TEXTBOUND_SERVER_CONCURRENCY"}


def _components(value: str) -> list[str]:
    names = [c.strip() for c in value.split(",") if c.strip()]
    unknown = [c for c in names if c not in COMPONENTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown component {', '.join(unknown)} (known: {', '.join(COMPONENTS)})")
    return names


# What a run checks when it names no family, as check's and bench's --help say.
EVERY_FAMILY = "every embedded family and each one under $TEXTBOUND_MODELS"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textbound", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def family_options(sub: argparse.ArgumentParser, without: str) -> None:
        """--impl, --server and the family options; ``without`` says what is checked when no family is named."""
        sub.add_argument("--impl", default=None, metavar="MODULE",
                         help=f"module (or .py file) exposing impl's public names (default: {DEFAULT_IMPL})")
        sub.add_argument("--server", default=None, metavar="URL",
                         help=f"check the running server at URL instead (--impl {SERVER_ADAPTER}; default: none)")
        sub.add_argument("--server-dialect", choices=DIALECTS, default="vllm",
                         help="the API --server speaks (default: %(default)s)")
        sub.add_argument("--model", default=None, metavar="NAME", help="the model --server serves (default: its only one)")
        sub.add_argument("--server-concurrency", type=_concurrency, default=None, metavar="N",
                         help=f"streamed requests --server gets at once, {CONCURRENCY_RANGE[0]} to {CONCURRENCY_RANGE[1]} "
                              "(default: the server's slots where its dialect tells them, else 4)")
        sub.add_argument("--family", action="append", default=[], metavar="NAME",
                         help="a family textbound knows by name: textbound families lists them (repeatable; "
                              f"default, with no --model-dir nor --hub either: {without})")
        sub.add_argument("--model-dir", action="append", default=[], metavar="DIR",
                         help="a folder with tokenizer.json (+ tokenizer_config.json), or a GGUF file (repeatable; "
                              "default: none)")
        sub.add_argument("--hub", action="append", default=[], metavar="REPO",
                         help="a Hugging Face hub repo id whose tokenizer files to fetch (repeatable; default: none)")

    check = commands.add_parser("check", help="check an implementation against the oracles")
    family_options(check, f"{EVERY_FAMILY}, and the budget's fuzzed pipelines")
    check.add_argument("--component", type=_components, default=None, metavar="LIST",
                       help=f"comma-separated components of {', '.join(COMPONENTS)} (default: every one with checks)")
    check.add_argument("--property", action="append", default=[], metavar="PATTERN",
                       help="check only the properties whose component/property name the glob matches, such as "
                            "stops/* or chat/ids, or whose property name it matches when it holds no / (repeatable; "
                            "default: every property of the components)")
    add_budget_option(check, "default")
    check.add_argument("--seed", type=int, default=0, metavar="N",
                       help="the seed of every random case and fuzzed pipeline (default: %(default)s)")
    check.add_argument("--jobs", type=_at_least_one, default=os.cpu_count() or 1, metavar="N",
                       help="worker processes checking cases (default: the number of CPUs)")
    check.add_argument("--report-dir", type=Path, default=None, metavar="DIR",
                       help="where to write the report (default: reports/runs/<time>)")
    check.add_argument("--baseline", type=Path, default=None, metavar="FILE",
                       help="known divergences (JSON), which do not fail the run (default: none)")
    _add_case_timeout(check, "a case running longer is recorded as 'timed out'")
    check.add_argument("--max-memory", type=_at_least_one, default=None, metavar="MB",
                       help="data size limit of each worker process (default: none)")
    check.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                       help="check only the K-th of N deterministic parts of the cases, to combine with merge "
                            "(default: every part)")
    check.add_argument("--fuzzed-only", action="store_true",
                       help="check only the budget's fuzzed pipelines, as a CI matrix runs each family on its own "
                            "(default: off)")
    check.add_argument("--junit", type=Path, default=None, metavar="PATH",
                       help="also write the JUnit XML here (default: only junit.xml in the report folder)")
    check.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                       help="also append the Markdown summary here, e.g. $GITHUB_STEP_SUMMARY (default: only "
                            "summary.md in the report folder)")

    replay = commands.add_parser("replay", help="re-run one recorded case")
    family_options(replay, "the case's own")
    replay.add_argument("case", metavar="CASE",
                        help="the case: its JSON, as a record's reproduce command holds it, or a file holding one "
                             "case or one record of divergences.jsonl (its minimized input is replayed)")
    _add_case_timeout(replay, "past this, the case is checked as check checks one that hangs: alone in a worker, "
                              "then without impl to tell the oracle's failure")

    families = commands.add_parser("families", help="the families a run can check, with their model types")
    add_budget_option(families, "default")
    families.add_argument("--seed", type=int, default=0, metavar="N",
                          help="the seed of the fuzzed pipelines listed (default: %(default)s)")

    init = commands.add_parser("init", help="write an adapter skeleton that passes textbound check at once")
    init.add_argument("--components", type=_components, default=None, metavar="LIST",
                      help=f"comma-separated components of {', '.join(COMPONENTS)} the adapter provides "
                           "(default: every one with checks)")
    init.add_argument("--jsonl", action="store_true",
                      help="a JSON-lines engine script, run by --impl textbound.adapters.jsonl_engine, instead of a "
                           "Python module (default: off)")
    init.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                      help="the folder to write it in, made if missing (default: the current folder)")

    bench = commands.add_parser("bench", help="speed of impl as a ratio against the oracle")
    family_options(bench, EVERY_FAMILY)
    bench.add_argument("--seconds", type=positive_seconds, default=2.0,
                       help="time per measurement (default: %(default)g)")
    bench.add_argument("--schemas", type=Path, default=None, metavar="DIR",
                       help="only count the JSON Schemas in DIR each structured engine compiles (default: none)")
    bench.add_argument("--schema-suite", type=Path, default=None, metavar="DIR",
                       help="only check impl on a JSON Schema Test Suite draft folder: no invalid instance admitted "
                            "(default: none)")
    bench.add_argument("--scaling", type=_jobs_list, default=None, metavar="JOBS",
                       help="instead: cases per second per component through the runner with each --jobs "
                            "count of a comma-separated list (e.g. 1,2), on the first family (default: none)")
    bench.add_argument("--overhead", action="store_true",
                       help="instead: the harness's time per case over the time of the same impl and oracle "
                            "calls alone, per component, on the first family (default: off)")

    triage = commands.add_parser("triage", help="a report's divergences by root cause, aligned")
    triage.add_argument("report_dir", type=Path, metavar="REPORT_DIR", help="the report folder of a run")
    triage.add_argument("--no-explain", action="store_true",
                        help="do not put each signature's smallest example to the mutation catalogue (default: off)")
    triage.add_argument("--reproducers", type=Path, default=None, metavar="OUT",
                        help="also write a standalone script per signature here, each seen to fail (default: none)")
    diff = commands.add_parser("diff", help="signatures new, fixed and unchanged between two reports")
    diff.add_argument("old", type=Path, metavar="OLD", help="the report folder of the earlier run")
    diff.add_argument("new", type=Path, metavar="NEW", help="the report folder of the later run")
    baseline = commands.add_parser("baseline", help="a baseline of a run's root causes, one entry each")
    baseline.add_argument("--from", dest="run_dir", type=Path, required=True, metavar="RUN_DIR",
                          help="the report folder of the run")
    baseline.add_argument("--reason", default=None, metavar="TEXT",
                          help="the reason of every entry (default: where each was seen)")
    baseline.add_argument("--out", type=Path, default=None, metavar="FILE", help="write it here (default: stdout)")
    merge = commands.add_parser("merge", help="combine the reports of --shard runs into one")
    merge.add_argument("out", type=Path, metavar="OUT", help="the folder of the merged report")
    merge.add_argument("shard_dirs", type=Path, nargs="+", metavar="SHARD_DIR", help="the report folder of each shard")
    mutate = commands.add_parser("mutate", help="mutation score: each mutant of mutants/ checked at the quick budget")
    add_mutate_arguments(mutate)
    _add_compare_command(commands)
    from .triage.explain import add_arguments as add_explain_arguments
    explain = commands.add_parser("explain", help="one tokenizer or chat mismatch, stage by stage, explained")
    add_explain_arguments(explain)
    _add_case_timeout(explain, "each side's render of --conversation may take this long; an oracle that takes "
                               "longer is its failure")
    for command in commands.choices.values():  # "--model" must never be read as "--model-dir"
        command.allow_abbrev = False
    return parser


class _Version(argparse.Action):
    """``--version``: textbound's version, the oracle each component is checked against (as every
    record is stamped) and impl's, then exit: ``textbound 0.1.0``, ``  tokenizer    tokenizers 0.23.3``, ..."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print textbound's version and the oracles' it checks against, and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(), end="")
        parser.exit()


def version_text() -> str:
    """textbound's version, then the oracle of each component and the default implementation's."""
    from importlib.metadata import PackageNotFoundError, version

    from textbound import impl
    try:
        own = version("textbound")
    except PackageNotFoundError:
        own = "(not installed: pip install -e .)"
    oracles = _oracle_versions()
    width = max(map(len, oracles))
    return "\n".join([f"textbound {own}", "oracles:", *(f"  {c:{width}}  {v}" for c, v in oracles.items()),
                      f"default --impl: {DEFAULT_IMPL} {impl.__version__}"]) + "\n"


def within(convert, accepts, expectation: str):
    """An argparse type: ``convert(value)`` when ``accepts`` it, else a usage error naming the range
    (``within(int, lambda n: n >= 1, "a whole number of 1 or more")("0")`` is refused)."""
    def parse(value: str):
        try:
            number = convert(value)
        except ValueError:
            number = None
        if number is None or not accepts(number):
            raise argparse.ArgumentTypeError(f"{value!r}: expected {expectation}")
        return number
    return parse


_at_least_one = within(int, lambda n: n >= 1, "a whole number of 1 or more")  # --jobs, --max-memory
_concurrency = within(int, lambda n: CONCURRENCY_RANGE[0] <= n <= CONCURRENCY_RANGE[1],
                      f"a whole number from {CONCURRENCY_RANGE[0]} to {CONCURRENCY_RANGE[1]}")
# --case-timeout: with 0 every case would time out; nan and inf are no limits either.
positive_seconds = within(float, lambda s: 0 < s < float("inf"), "a number of seconds greater than 0")


def _add_case_timeout(parser: argparse.ArgumentParser, meaning: str) -> None:
    """--case-timeout of check, replay and explain, which say what it means to each."""
    parser.add_argument("--case-timeout", type=positive_seconds, default=DEFAULT_CASE_TIMEOUT, metavar="SECONDS",
                        help=f"{meaning} (default: {DEFAULT_CASE_TIMEOUT:g})")


def _unusable_output(option: str, path: Path | None) -> str | None:
    """Why a file option (--junit, --markdown, baseline's --out) cannot be written, or None: checked
    before any case, as the file is written once the run is over. Its folder is made if missing."""
    if path is None:
        return None
    if path.is_dir():
        return f"{option} {path}: a folder, not a file"
    if (place := _file_among(path.parents)) is not None:
        return f"{option} {path}: {place} is a file, not a folder"
    return None


def _unusable_report_dir(path: Path) -> str | None:
    """Why ``path`` cannot hold a run's reports (a file, or a folder under one), or None."""
    if (place := _file_among((path, *path.parents))) is not None:
        return f"--report-dir {path}: {place} is a file, not a folder"
    return None


def _file_among(places) -> Path | None:
    """The first of ``places`` that exists and is no folder (where a folder is needed), or None."""
    return next((place for place in places if place.exists() and not place.is_dir()), None)


def _jobs_list(value: str) -> list[int]:
    try:
        counts = [int(n) for n in value.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: expected job counts of 1 or more, such as 1,2")
    return counts


def _shard(value: str) -> Shard:
    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    # transformers' advice to model users (no PyTorch, sequences longer than a model takes) is noise
    # in a conformance log, once per worker process.
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    args = _parser().parse_args(argv)
    if getattr(args, "server", None) and args.impl:
        print("textbound: --server checks the server at its URL: drop --impl", file=sys.stderr)
        return EXIT_SETUP
    with _server_environment(args):
        return _run_command(args, sys.argv[1:] if argv is None else argv)


@contextmanager
def _server_environment(args):
    """With --server: textbound.adapters.server's environment, for this process and its workers."""
    if not getattr(args, "server", None):
        yield
        return
    args.impl = SERVER_ADAPTER
    sys.modules.pop(SERVER_ADAPTER, None)  # the adapter reads its environment when imported: this run's
    with patch.dict(os.environ, {name: str(getattr(args, option)) for option, name in SERVER_ENV.items()
                                 if getattr(args, option)}):
        yield


def _run_command(args, argv: list[str]) -> int:
    try:
        if args.command in COMMANDS_WITHOUT_IMPL:
            return COMMANDS_WITHOUT_IMPL[args.command](args)
        if args.command in JUDGED_COMMANDS and (status := _judged_apart(args, argv)) is not None:
            return status
        impl = _implementation(args)
        if args.command == "check":
            return _check(args, impl)
        if args.command == "replay":
            from .run.replay import run_command as run_replay
            return run_replay(args, impl)
        if impl.source == SERVER:
            print("textbound: bench measures a library against its oracle; a server is checked: textbound check",
                  file=sys.stderr)
            return EXIT_SETUP
        if args.schema_suite is not None:
            from .bench.schemas import suite_report
            return suite_report(impl, args.schema_suite)
        if args.schemas is not None:
            from .bench.schemas import schema_coverage
            return schema_coverage(impl, args.schemas)
        families = resolve(args.family, args.model_dir, args.hub)
        if args.overhead:
            from .bench.overhead import run_overhead_bench
            from .checks import checked_components
            run_overhead_bench(impl, families[0], checked_components(), BUDGETS["default"])
            return EXIT_OK
        if args.scaling:
            from .bench.harness import run_scaling_bench
            from .checks import checked_components
            run_scaling_bench(impl, families[0], checked_components(), BUDGETS["default"], args.scaling)
            return EXIT_OK
        from .bench.command import run_bench
        return run_bench(impl, families, args.seconds)
    except (ImplementationError, FamilyError, BaselineError, RunFolderError, MergeError, InputFileError,
            LimitError, OracleEnvError, MissingExtra) as exc:
        print(f"textbound: {one_line(exc)}", file=sys.stderr)
        markdown = getattr(args, "markdown", None)
        if markdown and not _unusable_output("--markdown", markdown):  # the CI step summary says so too
            _append_markdown(markdown, setup_failure_markdown(str(exc)))
        return EXIT_SETUP


def _judged_apart(args, argv: list[str]) -> int | None:
    """The exit status of the command run in the oracle environment when the oracle libraries here
    are older than the supported ones (else None: they judge here). A library --impl stays here,
    served to it; a server, or an engine already reached over JSON lines, is reached from there."""
    from .adapters.serve import served_environment
    environment = oracles_apart()
    if environment is None:
        return None
    name = args.impl or DEFAULT_IMPL
    served = {} if args.impl in (SERVER_ADAPTER, JSONL_ADAPTER) else served_environment(name)
    versions = ", ".join(f"{package} {version}" for package, version in environment.versions.items())
    print(f"textbound: {' and '.join(environment.unsupported_here)} here do not judge: the oracles of "
          f"{environment.python} do ({versions})" + (f"; --impl {name} is served from here" if served else ""),
          file=sys.stderr)
    return judge_apart(environment, argv, served)


def _implementation(args) -> Implementation:
    """The implementation the command checks. A server that cannot be reached is named by its URL,
    as the user gave it, not as an adapter module that does not import."""
    try:
        return Implementation(args.impl or DEFAULT_IMPL)
    except ImplementationError as exc:
        if getattr(args, "server", None) and exc.__cause__ is not None:
            raise ImplementationError(f"--server {args.server}: {exc.__cause__}") from exc.__cause__
        raise


def _triage(args) -> int:
    from .records.run_folder import load_run
    from .triage.causes import triage_text
    if args.reproducers is not None and (problem := _unusable_report_dir(args.reproducers)):
        print(f"textbound: --reproducers {problem.removeprefix('--report-dir ')}", file=sys.stderr)
        return EXIT_SETUP
    run = load_run(args.report_dir)
    print(triage_text(run, explain=not args.no_explain), end="")
    if args.reproducers is not None:
        from .triage.reproducer import write_reproducers
        print("reproducers:", *write_reproducers(run, args.reproducers), sep="\n  ")
    return EXIT_OK


def _diff(args) -> int:
    from .records.run_folder import load_run
    from .triage.causes import diff_text
    new = load_run(args.new)
    text, result = diff_text(load_run(args.old), new)
    print(text, end="")
    # an incomplete NEW fails as an interrupted check does: its cases were not all checked
    return EXIT_DIVERGED if result.new or not new.completed else EXIT_OK


def _baseline(args) -> int:
    import json

    from .naming.baseline import baseline_of
    from .naming.root_causes import summary_root_causes
    from .naming.signatures import split_records
    from .records.report import write_atomically
    from .records.run_folder import load_run
    run = load_run(args.run_dir)
    if args.reason is not None and not args.reason.strip():
        print("textbound: --reason must not be empty: a baseline entry says why it is known", file=sys.stderr)
        return EXIT_SETUP
    causes = summary_root_causes(run.summary, split_records(run.records)[0])  # one entry per root cause
    text = json.dumps(baseline_of(causes, str(args.run_dir), args.reason), ensure_ascii=False, indent=1) + "\n"
    if args.out is None:
        print(text, end="")
        return EXIT_OK
    if problem := _unusable_output("--out", args.out):
        print(f"textbound: {problem}", file=sys.stderr)
        return EXIT_SETUP
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.out, text)
    return EXIT_OK


def _merge(args) -> int:
    from .records.merge import merge
    summary = merge(args.out, args.shard_dirs)
    print(f"textbound: merged {len(args.shard_dirs)} report(s): {sum(c['cases'] for c in summary['counts'])} cases, "
          f"{len(summary['signatures'])} signature(s), new: {len(summary['new'])}; report: {args.out / 'report.md'}")
    if not summary["completed"]:
        print(f"  incomplete: {summary['interrupted']}")
    # a shard missing or interrupted fails the gate as its junit.xml does: its cases were not checked
    return EXIT_DIVERGED if summary["new"] or summary["errors"] or not summary["completed"] else EXIT_OK


# -- compare: the tokenizer-change gate (textbound.compare); exits 0 unchanged, 1 changed, 2 bad input --

def _add_compare_command(commands) -> None:
    from .compare.command import add_arguments
    compare = commands.add_parser("compare", help="every behaviour change between two versions of a family")
    add_arguments(compare)


def _compare(args) -> int:
    from .compare.command import run_command
    return run_command(args, sys.argv[1:])

# -- end of compare --


def _explain(args) -> int:
    from .triage.explain import run_command
    return run_command(args)


# Commands judged by the oracles, which run where the supported oracle libraries are (_judged_apart).
JUDGED_COMMANDS = ("check", "replay")


def _families(args) -> int:
    from .families.listing import listing, listing_text
    print(listing_text(listing(args.seed, BUDGETS[args.budget].fuzz_pipelines)), end="")
    return EXIT_OK


def _init(args) -> int:
    from .adapters.skeleton import Skeleton, SkeletonError, write_skeleton
    from .checks import checked_components
    skeleton = Skeleton(tuple(args.components or checked_components()), args.jsonl, args.out)
    try:
        path = write_skeleton(skeleton)
    except SkeletonError as exc:
        print(f"textbound: {exc}", file=sys.stderr)
        return EXIT_SETUP
    kind = "a JSON-lines engine" if args.jsonl else "an adapter module"
    print(f"textbound: wrote {path}: {kind} of {', '.join(skeleton.names)}, each delegating to {DEFAULT_IMPL} "
          f"(the lines to change are marked '# ENGINE'); check it with:\n{skeleton.check_command()}")
    return EXIT_OK


# Commands that need no --impl of their own (mutate loads each mutant itself, compare runs oracles only,
# explain loads its --impl itself to name a failure as bad input; families and init check nothing).
COMMANDS_WITHOUT_IMPL = {"triage": _triage, "diff": _diff, "baseline": _baseline, "merge": _merge, "mutate": run_mutate,
                         "compare": _compare, "explain": _explain, "families": _families, "init": _init}


def _check(args, impl: Implementation) -> int:
    from .checks import checked_components
    from .records.report import FUZZED, Recorder, RunInfo, failed_requests, keep_earlier_report
    from .run.pool import Limits, refuse_unusable
    from .run.runner import Plan, run

    budget = BUDGETS[args.budget]
    baseline = load_baseline(args.baseline)
    report_dir = args.report_dir or Path("reports") / "runs" / time.strftime("%Y%m%d-%H%M%S")
    if problem := (_unusable_report_dir(report_dir) or _unusable_output("--junit", args.junit)
                   or _unusable_output("--markdown", args.markdown)):
        print(f"textbound: {problem}", file=sys.stderr)
        return EXIT_SETUP
    explicit = args.family or args.model_dir or args.hub
    if impl.source == SERVER and (args.fuzzed_only or not explicit):
        raise FamilyError("a server is checked against its model's tokenizer files: give --family, --model-dir or --hub")
    if args.fuzzed_only and explicit:
        raise FamilyError("--fuzzed-only checks the fuzzed pipelines alone: drop --family, --model-dir and --hub")
    families = [] if args.fuzzed_only else resolve(args.family, args.model_dir, args.hub)
    if not explicit:
        families += fuzz_families(args.seed, budget.fuzz_pipelines, report_dir / FUZZED)
    checked = checked_components()
    unchecked = [c for c in args.component or [] if c not in checked]
    if unchecked:
        print(f"textbound: no checks exist yet for {', '.join(unchecked)} (checked: {', '.join(checked)})",
              file=sys.stderr)
        return EXIT_SETUP
    components = args.component or checked
    if args.property:
        from .checks import UnknownProperty, selected_properties
        try:
            properties = selected_properties(args.property, components)
        except UnknownProperty as exc:
            print(f"textbound: {exc}", file=sys.stderr)
            return EXIT_SETUP
        components = [c for c in components if any(name.startswith(f"{c}/") for name in properties)]
    else:
        properties = []
    if not any(map(impl.provides, components)):  # a run that checks nothing must not pass as a gate
        lacking = "; ".join(f"{c} (missing {', '.join(impl.missing(c))})" for c in components)
        print(f"textbound: --impl {impl.name} provides none of the components checked: {lacking}", file=sys.stderr)
        return EXIT_SETUP
    oracles = {c: v for c, v in _oracle_versions().items() if c in components}
    info = RunInfo(impl=impl.name, impl_version=impl.version, oracle_versions=oracles,
                   seed=args.seed, budget=budget.name, families={f.name: str(f.path) for f in families},
                   impl_options=_server_options(args), impl_environment=impl.replay_environment(),
                   selected_properties=tuple(properties))
    limits = Limits(case_timeout=args.case_timeout, max_memory_mb=args.max_memory)
    refuse_unusable(limits)  # before a report is begun: no case could be checked under it
    if (kept := keep_earlier_report(report_dir)) is not None:
        print(f"textbound: --report-dir {report_dir} held an earlier run's report: it is kept in {kept}",
              file=sys.stderr)
    recorder = Recorder(report_dir, info)
    plan = Plan(impl, families, components, budget, args.seed, args.shard, baseline, properties)
    try:
        verdict = run(plan, recorder, jobs=args.jobs, limits=limits)
    except FamilyUnloadable as exc:  # the report's summary says so too (its run stopped on it)
        print(f"textbound: {one_line(exc)}", file=sys.stderr)
        return EXIT_SETUP
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"textbound: interrupted ({signal.Signals(signum).name}); the report of what was checked: "
              f"{report_dir / 'report.md'}", file=sys.stderr)
        return 128 + signum
    finally:
        _copy_gate_outputs(report_dir, args.junit, args.markdown)
    print(f"textbound: {recorder.cases} cases on {len(families)} families "
          f"in {verdict.seconds} s; new divergences: {len(verdict.new)}, baselined: {len(verdict.known)}, "
          f"fixed: {len(verdict.fixed)}, oracle disagreements: {recorder.oracle_disagreements}; "
          + (f"failed requests: {failed_requests(recorder.records)}; " if impl.source == SERVER else "")
          + f"report: {report_dir / 'report.md'}")
    for signature in verdict.new:
        print(f"  NEW {signature}")
    for entry in verdict.fixed:
        print(f"  FIXED (remove from baseline) {BaselineEntry.from_json(entry).label}")
    for note in recorder.notes:
        print(f"  note: {note}")
    if properties and not recorder.cases:  # nothing was checked: a gate that would pass on nothing
        print(f"textbound: --property {' '.join(args.property)}: no case of {', '.join(properties)} was checked",
              file=sys.stderr)
        return EXIT_SETUP
    return EXIT_DIVERGED if verdict.failed else EXIT_OK


def _server_options(args) -> tuple[str, ...]:
    """How a replay names the server checked: ``("--server", URL, "--server-dialect", "vllm", "--model", NAME)``."""
    if not args.server:
        return ()
    return ("--server", args.server, "--server-dialect", args.server_dialect, *(("--model", args.model) if args.model else ()),
            *(("--server-concurrency", str(args.server_concurrency)) if args.server_concurrency else ()))


def _copy_gate_outputs(report_dir: Path, junit: Path | None, markdown: Path | None) -> None:
    """--junit and --markdown: the report folder's junit.xml and summary.md where CI looks for them."""
    if junit and (report_dir / "junit.xml").is_file():
        junit.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report_dir / "junit.xml", junit)
    if markdown and (report_dir / "summary.md").is_file():
        _append_markdown(markdown, (report_dir / "summary.md").read_text(encoding="utf-8"))


def _append_markdown(markdown: Path, text: str) -> None:
    markdown.parent.mkdir(parents=True, exist_ok=True)
    with open(markdown, "a", encoding="utf-8") as out:
        out.write(text)


def _oracle_versions() -> dict[str, str]:
    from textbound.oracles import versions
    return versions()


if __name__ == "__main__":
    sys.exit(main())
