"""``textbound bench --schemas DIR``: how many of a folder's JSON Schemas each engine compiles.

Every schema is compiled by impl's ``json_schema_to_regex``, outlines-core's
``build_regex_from_schema`` and llguidance's grammar compiler, each in a fresh (forked) process with
a time limit, and tallied as compiled / refused / timed out with the most frequent refusal reasons.
For impl, every compiled schema's pattern is also sampled (``SAMPLES`` random matches, drawn from its
syntax tree) and each sample validated by jsonschema (the draft its ``$schema`` names, formats
checked): a sample the schema forbids makes the schema "unsound"; a pattern over ``SAMPLED_SIZE``
characters is counted "not sampled".
Example: ``textbound bench --schemas path/to/schemastore/jsondata`` prints one row per engine.

``suite_violations`` runs the JSON Schema Test Suite's files of one draft
(``textbound bench --schema-suite DIR``): for every schema impl compiles, no instance the suite calls
invalid may match impl's pattern in any json.dumps form.
"""
from __future__ import annotations

import json
import multiprocessing
import re
import sys
from collections import Counter
from pathlib import Path

SCHEMA_TIMEOUT = 10.0  # seconds one engine may take on one schema
SAMPLES = 30  # random matches of impl's pattern validated per compiled schema
SAMPLED_SIZE = 400_000  # characters: a longer pattern takes impl's parser minutes to walk
UNSOUND = "unsound: "  # how a sampled-soundness failure is told from a refusal
TOP_REASONS = 4
# A quoted name longer than this is a value (a URL, a pattern), not a keyword: it is elided.
_LONG_QUOTED = re.compile(r"'[^']{24,}'|\"[^\"]{24,}\"")


def _llguidance_compile(schema) -> None:
    """llguidance's grammar of ``schema``, compiled: writing the grammar alone checks nothing."""
    import llguidance

    from oracles.structured_oracles import llguidance_grammar

    problem = llguidance.LLMatcher.validate_grammar(llguidance_grammar(schema))
    if problem:
        raise ValueError(problem)


def draft_errors(schema, instance) -> list[str]:
    """jsonschema's errors for ``instance`` under the draft ``schema``'s ``$schema`` names (2020-12 when none)."""
    import jsonschema

    kind = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return [error.message for error in kind(schema, format_checker=kind.FORMAT_CHECKER).iter_errors(instance)]


def _sampled_impl(impl):
    def compile_and_sample(schema) -> None:
        import random

        from properties.regex_samples import sample_matches

        pattern = impl.json_schema_to_regex(schema)
        if len(pattern) > SAMPLED_SIZE:
            raise _NotSampled
        for text in sample_matches(pattern, random.Random(0), SAMPLES):
            errors = draft_errors(schema, json.loads(text))
            if errors:
                raise ValueError(f"{UNSOUND}{text[:200]}: {errors[0][:200]}")
    return compile_and_sample


class _NotSampled(Exception):
    """The pattern compiled but is too large to sample."""


def _engines(impl) -> dict:
    from oracles.structured_oracles import outlines_regex

    return {"impl": _sampled_impl(impl), "outlines-core": outlines_regex, "llguidance": _llguidance_compile}


def _compile(engine, schema, results) -> None:
    try:
        engine(schema)
        results.put(("compiled", ""))
    except _NotSampled:
        results.put(("compiled", "not sampled"))
    except Exception as exc:  # noqa: BLE001 - every engine's refusal is a result to tally
        results.put(("refused", str(exc).splitlines()[0] if str(exc) else type(exc).__name__))


def compile_in_child(engine, schema, timeout: float) -> tuple[str, str]:
    """("compiled" | "refused" | "timed out", reason) of ``engine(schema)`` run in a forked process."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_compile, args=(engine, schema, results))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        return "timed out", ""
    return results.get() if not results.empty() else ("refused", f"crashed (exit {child.exitcode})")


def reason_class(reason: str) -> str:
    """A refusal's message without its JSON path and long quoted values: the class it belongs to.

    ``reason_class("unsupported keyword 'not' at $.a")`` -> ``"unsupported keyword 'not'"``.
    """
    head = _LONG_QUOTED.sub("…", reason.split(" at ")[0])
    return head[:70]


def schema_coverage(impl, folder: Path, timeout: float = SCHEMA_TIMEOUT) -> int:
    """Prints the coverage table of ``folder``'s ``*.json`` schemas; returns 0, or 2 when none is readable."""
    schemas = {}
    for path in sorted(folder.rglob("*.json")):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(schema, (dict, bool)):
            schemas[path.name] = schema
    if not schemas:
        print(f"textbound: no JSON schema in {folder}", file=sys.stderr)
        return 2
    print(f"{len(schemas)} schemas in {folder}, {timeout:g} s each")
    print("| engine | compiled | refused | timed out | top refusals |\n|---|---|---|---|---|")
    unsound = []
    for name, engine in _engines(impl).items():
        outcomes, reasons = Counter(), Counter()
        for file_name, schema in schemas.items():
            outcome, reason = compile_in_child(engine, schema, timeout)
            if reason.startswith(UNSOUND):
                outcome = "compiled"
                unsound.append(f"{file_name}: {reason}")
            outcomes[outcome] += 1
            outcomes["not sampled"] += reason == "not sampled"
            if outcome == "refused":
                reasons[reason_class(reason)] += 1
        top = ", ".join(f"{reason} {count}" for reason, count in reasons.most_common(TOP_REASONS))
        print(f"| {name} | {outcomes['compiled']} | {outcomes['refused']} | {outcomes['timed out']} | {top} |",
              flush=True)
        if name == "impl":
            sampled = outcomes["compiled"] - outcomes["not sampled"]
            print(f"<!-- impl: {sampled} compiled schemas sampled ({SAMPLES} matches each), {len(unsound)} unsound, "
                  f"{outcomes['not sampled']} not sampled (pattern over {SAMPLED_SIZE} characters) -->", flush=True)
    for line in unsound:
        print(f"unsound {line}")
    return 1 if unsound else 0


def suite_violations(impl, folder: Path) -> tuple[int, int, list[str]]:
    """(schemas impl compiles, schemas, one line per instance the suite calls invalid that impl admits)
    over the JSON Schema Test Suite files (``*.json``: lists of {schema, tests}) in ``folder``."""
    from oracles.structured_oracles import dumps_forms

    compiled, total, violations = 0, 0, []
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            total += 1
            try:
                pattern = re.compile(impl.json_schema_to_regex(group["schema"]))
            except ValueError:
                continue
            compiled += 1
            for test in group["tests"]:
                if not test["valid"] and any(pattern.fullmatch(text) for text in dumps_forms(test["data"])):
                    violations.append(f"{path.name}: {group['description']}: {test['description']}")
    return compiled, total, violations


def suite_report(impl, folder: Path) -> int:
    """Prints ``suite_violations``; returns 0 when there is none, 1 otherwise, 2 when nothing is readable."""
    try:
        compiled, total, violations = suite_violations(impl, folder)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        print(f"textbound: {folder} is not a JSON Schema Test Suite folder: {exc}", file=sys.stderr)
        return 2
    if not total:
        print(f"textbound: no test file in {folder}", file=sys.stderr)
        return 2
    print(f"{folder}: impl compiles {compiled} of {total} schemas; {len(violations)} invalid instances admitted")
    for line in violations:
        print(f"admitted {line}")
    return 1 if violations else 0
