"""``textbound replay``: one recorded case checked again, on the implementation and the oracle, as
``check`` checked it.

The case is its JSON (a record's ``reproduce`` command holds it), or a file holding one case or one
record of divergences.jsonl, whose minimized input is replayed. Its family is the case's own: the
folder a record's reproduce command names (a fuzzed family lives in its report's fuzz/ folder),
else the family of that name (``textbound families``); ``--family``, ``--model-dir`` or ``--hub``
names another.

    textbound replay '{"component": "stops", "property": "stream", "family": "gpt2", "input": {...}}'
    textbound replay --impl ./textbound_adapter.py divergence.json   # one line of divergences.jsonl

Exit status: 0 the implementation agrees (or the references disagree: not its divergence), 1 it
diverges, 2 the case or its family cannot be used.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..families import NAMED_FAMILIES, Family, FamilyError, resolve
from ..files import InputFileError, read_text
from ..naming.divergence import Case, Divergence
from ..one_line import one_line
from ..plan.implementation import Implementation
from .time_limit import NoAnswer, time_limit

EXIT_AGREES, EXIT_DIVERGES, EXIT_BAD_CASE = 0, 1, 2
FOLDER_OPTION = "--model-dir"  # how a record's reproduce command names the family folder it checked


class CaseError(ValueError):
    """The case cannot be replayed; its text is what ``the case is not valid:`` is followed by."""


@dataclass(frozen=True)
class Recorded:
    """A case to replay, and the family folder its record's reproduce command names (None for a bare case).

        >>> read_case('{"component": "stops", "property": "stream", "family": "gpt2", "input": {}}').folder is None
        True
    """

    case: Case
    folder: str | None = None


def read_case(argument: str) -> Recorded:
    """The case ``argument`` gives: JSON text when it is empty or begins with ``{`` or ``[``, else the
    name of a file holding it. A file that cannot be read raises InputFileError; a case that is not
    one, CaseError."""
    if not argument.strip() or argument.lstrip().startswith(("{", "[")):
        text, where = argument, "CASE"
    else:
        text, where = read_text(Path(argument)), argument
    try:
        case = Case.from_json(text, where)
    except InputFileError as exc:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
            raise CaseError(f"{where}: {len(lines)} JSON lines (divergences.jsonl?); replay takes one: save one "
                            "line in a file of its own") from None
        raise CaseError(str(exc)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise CaseError(one_line(exc)) from None
    return Recorded(case, _recorded_folder(text))


def _recorded_folder(text: str) -> str | None:
    """The family folder a record's reproduce command names: ``--model-dir FOLDER``."""
    reproduce = json.loads(text).get("reproduce")
    try:
        words = shlex.split(reproduce) if isinstance(reproduce, str) else []
    except ValueError:  # a reproduce command with unbalanced quotes names no folder
        return None
    return next((folder for option, folder in zip(words, words[1:]) if option == FOLDER_OPTION), None)


def replay_family(recorded: Recorded, args: argparse.Namespace) -> Family:
    """The family to replay on: the one --family, --model-dir or --hub names; else the folder the
    record names, when it is still there; else the family named as the case's."""
    if args.family or args.model_dir or args.hub:
        families = resolve(args.family, args.model_dir, args.hub)
        if len(families) != 1:
            raise FamilyError("replay needs at most one --family, --model-dir or --hub")
        return families[0]
    if recorded.folder and Path(recorded.folder).is_dir():
        return resolve([], [recorded.folder], [])[0]
    name = recorded.case.family
    if not any(name in source.names() for source in NAMED_FAMILIES):
        raise FamilyError(f"the case's family {name!r} is not one textbound knows by name (textbound families lists "
                          f"them): give its folder with --model-dir (a fuzzed family's is in its report's fuzz/)")
    return resolve([name], [], [])[0]


def run_command(args: argparse.Namespace, impl: Implementation) -> int:
    """``textbound replay`` with parsed ``args`` (its CASE, family options and --case-timeout) on ``impl``."""
    from ..checks import Subject, UnknownCheck, run_check
    try:
        recorded = read_case(args.case)
    except CaseError as exc:
        return _invalid(str(exc))
    case = recorded.case
    family = replay_family(recorded, args)
    try:
        with time_limit(args.case_timeout) as limit:
            divergence = run_check(Subject(family.name, family.path, impl), case)
    except NoAnswer:  # the limit's own exception, not the case's: the worker below gives the verdict
        divergence = None
    except KeyError as exc:  # the implementation's own failures are divergences: this is the case's input
        return _invalid(f"{case.component}/{case.property} reads the field {exc} of its input, which it lacks")
    except UnknownCheck as exc:
        return _invalid(one_line(exc))
    except (TypeError, ValueError, AttributeError) as exc:  # a field of the wrong type or value, refused
        return _invalid(f"{case.component}/{case.property} cannot take its input: {type(exc).__name__}: {one_line(exc)}")
    if limit.fired:  # what check makes of a case that hangs, whoever hangs
        divergence = _checked_alone(impl, family, case, args.case_timeout)
    if divergence is None:
        print("no divergence: impl agrees with the oracle on this case")
        return EXIT_AGREES
    if divergence.is_oracle_disagreement:  # the references disagree; impl sides with one: not impl's
        print(f"oracle disagreement, not impl's divergence: {divergence.describe()}")
        return EXIT_AGREES
    print(divergence.describe())
    return EXIT_DIVERGES


def _invalid(why: str) -> int:
    print(f"textbound: the case is not valid: {why}", file=sys.stderr)
    return EXIT_BAD_CASE


def _checked_alone(impl: Implementation, family: Family, case: Case, seconds: float) -> Divergence | None:
    """``case`` checked as check does one that hangs or crashes: alone in a worker under the case
    timeout; when it hangs or crashes without impl as well, it is the oracle's failure."""
    from .pool import Limits, Pool, Stuck, hangs_without_impl, oracle_failure
    pool = Pool(impl.name, 1, Limits(case_timeout=seconds))
    try:
        found = pool.check_alone(family, case)
        if isinstance(found, Stuck):
            stuck = found.divergence
            found = oracle_failure(stuck) if hangs_without_impl(pool, family, stuck) else stuck
        return found
    finally:
        pool.close()
