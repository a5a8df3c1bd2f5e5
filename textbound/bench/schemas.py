"""``textbound bench --schemas DIR``: how many of a folder's JSON Schemas each engine compiles.

Every schema is compiled by impl's ``json_schema_to_regex``, outlines-core's
``build_regex_from_schema`` and llguidance's grammar compiler, each in a fresh (forked) process with
a time limit, and tallied as compiled / refused / timed out with the most frequent refusal reasons.
Limits are CPU seconds (the machine may be shared), with a wall-clock backstop. For impl, every
compiled schema's pattern is also sampled (``SAMPLES`` seeded random matches, drawn from its shared
form, properties/shared_patterns.py, so a pattern of a gigabyte is sampled too) and each sample
validated by jsonschema (the draft its ``$schema`` names, formats checked): a sample the schema
forbids makes the schema "unsound", and a schema whose sampling fails is listed "not sampled" — both
make the exit status 1.
Example: ``textbound bench --schemas path/to/schemastore/jsondata`` prints one row per engine.

``suite_violations`` runs the JSON Schema Test Suite's files of one draft
(``textbound bench --schema-suite DIR``): for every schema impl compiles, no instance the suite calls
invalid may match impl's pattern in any json.dumps form.
"""
from __future__ import annotations

import json
import math
import multiprocessing
import queue
import re
import signal
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

from textbound.oracles import lacking, require

SCHEMA_TIMEOUT = 10.0  # CPU seconds one engine may take to compile one schema
SAMPLE_SECONDS = 120.0  # CPU seconds more for sampling impl's pattern of one schema
WALL_FACTOR = 20  # the machine may be shared: a child gets this many wall seconds per CPU second
MEMORY_LIMIT = 8 << 30  # bytes of address space a child may take (a pattern may run to a gigabyte)
SAMPLES = 50  # random matches of impl's pattern validated per compiled schema
PLAIN_SIZE = 2_000_000  # characters: a pattern not in shared form is sampled from its own parse up to this size
CHECKED_SIZE = 200_000  # characters: a pattern up to this size also checks each sample with Python's re
UNSOUND = "unsound: "  # how a sampled-soundness failure is told from a refusal
NOT_SAMPLED = "not sampled: "
SAMPLED = "sampled"
TOP_REASONS = 4
# A quoted name longer than this is a value (a URL, a pattern), not a keyword: it is elided.
_LONG_QUOTED = re.compile(r"'[^']{24,}'|\"[^\"]{24,}\"")


def _llguidance_compile(schema) -> None:
    """llguidance's grammar of ``schema``, compiled: writing the grammar alone checks nothing."""
    from textbound.oracles.structured_oracles import llguidance_grammar

    problem = require("llguidance").LLMatcher.validate_grammar(llguidance_grammar(schema))
    if problem:
        raise ValueError(problem)


def draft_errors(schema, instance) -> list[str]:
    """jsonschema's errors for ``instance`` under the draft ``schema``'s ``$schema`` names (2020-12 when none)."""
    import jsonschema

    kind = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return [error.message for error in kind(schema, format_checker=kind.FORMAT_CHECKER).iter_errors(instance)]


class Unsound(Exception):
    """A sample of impl's pattern that the schema forbids."""


def sound_samples(impl, schema, pattern: str, seed: int) -> None:
    """Draws ``SAMPLES`` matches of ``pattern`` (impl's for ``schema``) from its shared form and raises
    Unsound naming the first one jsonschema rejects; ValueError where the sample cannot be drawn."""
    import random

    from textbound.properties.regex_samples import sample_shared
    from textbound.properties.shared_patterns import SharedPattern, shared_pattern

    try:
        shared = shared_pattern(schema)
    except ValueError:
        shared = None
    if shared is None or not shared.expands_to(pattern):  # an impl other than impl.structured's (a mutant)
        if len(pattern) > PLAIN_SIZE:
            raise ValueError(f"impl's pattern is not impl.structured's and has over {PLAIN_SIZE} characters")
        shared = SharedPattern(pattern, ())
    checked = re.compile(pattern) if len(pattern) <= CHECKED_SIZE else None
    del pattern  # it may be a gigabyte: the samples come from the shared form
    for text in sample_shared(shared, random.Random(seed), SAMPLES):
        if checked is not None and not checked.fullmatch(text):
            raise ValueError(f"the sampler drew a non-match: {text[:200]}")
        errors = draft_errors(schema, json.loads(text))
        if errors:
            raise Unsound(f"{text[:200]}: {errors[0][:200]}")


def _sampled_impl(impl):
    def compile_then_sample(schema):
        pattern = impl.json_schema_to_regex(schema)
        return lambda seed: sound_samples(impl, schema, pattern, seed)
    return compile_then_sample


def _engines(impl) -> dict:
    from textbound.oracles.structured_oracles import outlines_regex

    engines = {"impl": _sampled_impl(impl), "outlines-core": outlines_regex, "llguidance": _llguidance_compile}
    # Refused before any schema: a library missing would otherwise be counted as its engine failing on each.
    missing = lacking(name for name in engines if name != "impl")
    if missing:
        raise missing
    return engines


def _message(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _compile(engine, schema, limits: tuple[float, float], seed: int, results) -> None:
    """In the child: ``engine(schema)`` within ``limits[0]`` CPU seconds; a callable it returns (a
    soundness check) then runs within ``limits[1]`` more, given ``seed``."""
    import resource

    timeout, sample_seconds = limits
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(timeout), hard))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))
    try:
        check = engine(schema)
    except Exception as exc:  # noqa: BLE001 - every engine's refusal is a result to tally
        results.put(("refused", _message(exc)))
        return
    if not callable(check):
        results.put(("compiled", ""))
        return
    results.put(("compiled", NOT_SAMPLED + "sampling ran out of time or memory"))
    used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used + sample_seconds), hard))
    try:
        check(seed)
        results.put(("compiled", SAMPLED))
    except Unsound as exc:
        results.put(("compiled", UNSOUND + _message(exc)))
    except Exception as exc:  # noqa: BLE001 - a sampling failure is reported, never counted as sound
        results.put(("compiled", NOT_SAMPLED + _message(exc)))


def compile_in_child(engine, schema, timeout: float, seed: int = 0,
                     sample_seconds: float = SAMPLE_SECONDS) -> tuple[str, str]:
    """("compiled" | "refused" | "timed out", reason) of ``engine(schema)`` run in a forked process
    limited to ``timeout`` CPU seconds (a compiled result's reason is ``sampled``, ``unsound: ...`` or
    ``not sampled: ...`` where the engine returned a soundness check, else empty)."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_compile, args=(engine, schema, (timeout, sample_seconds), seed, results))
    child.start()
    outcomes = []
    deadline = time.monotonic() + WALL_FACTOR * (timeout + sample_seconds)
    while child.is_alive() or not results.empty():
        try:
            outcomes.append(results.get(timeout=max(0.0, min(1.0, deadline - time.monotonic()))))
        except queue.Empty:
            if time.monotonic() >= deadline:
                break
    if child.is_alive():
        child.kill()
    child.join()
    if outcomes:
        return outcomes[-1]
    if child.exitcode in (-signal.SIGXCPU, -signal.SIGKILL) or child.exitcode is None:
        return "timed out", ""
    return "refused", f"crashed (exit {child.exitcode})"


def reason_class(reason: str) -> str:
    """A refusal's message without its JSON path and long quoted values: the class it belongs to.

    ``reason_class("unsupported keyword 'not' at $.a")`` -> ``"unsupported keyword 'not'"``.
    """
    head = _LONG_QUOTED.sub("…", reason.split(" at ")[0])
    return head[:70]


def schema_coverage(impl, folder: Path, timeout: float = SCHEMA_TIMEOUT) -> int:
    """Prints the coverage table of ``folder``'s ``*.json`` schemas; returns 0, 1 when a compiled schema
    of impl's is unsound or not sampled, or 2 when none is readable."""
    schemas = {}
    for path in sorted(folder.rglob("*.json")):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(schema, (dict, bool)):
            schemas[str(path.relative_to(folder))] = schema
    if not schemas:
        print(f"textbound: no JSON schema in {folder}", file=sys.stderr)
        return 2
    engines = _engines(impl)
    print(f"{len(schemas)} schemas in {folder}, {timeout:g} CPU s each")
    print("| engine | compiled | refused | timed out | top refusals |\n|---|---|---|---|---|")
    failures = []  # impl's compiled schemas not shown sound: unsound or not sampled
    for name, engine in engines.items():
        outcomes, reasons = Counter(), Counter()
        for file_name, schema in schemas.items():
            outcome, reason = compile_in_child(engine, schema, timeout, zlib.crc32(file_name.encode()))
            outcomes[outcome] += 1
            outcomes[SAMPLED] += reason == SAMPLED
            outcomes[UNSOUND] += reason.startswith(UNSOUND)
            if reason.startswith((UNSOUND, NOT_SAMPLED)):
                failures.append(f"{file_name}: {reason}")
            if outcome == "refused":
                reasons[reason_class(reason)] += 1
        top = ", ".join(f"{reason} {count}" for reason, count in reasons.most_common(TOP_REASONS))
        print(f"| {name} | {outcomes['compiled']} | {outcomes['refused']} | {outcomes['timed out']} | {top} |",
              flush=True)
        if name == "impl":
            print(f"<!-- impl: {outcomes[SAMPLED]} of {outcomes['compiled']} compiled schemas sampled "
                  f"({SAMPLES} matches each, {SAMPLE_SECONDS:g} CPU s), {outcomes[UNSOUND]} unsound -->", flush=True)
            print("<!-- impl refusals: " + "; ".join(f"{reason} {count}" for reason, count in reasons.most_common())
                  + " -->", flush=True)
    for line in failures:
        print(line)
    return 1 if failures else 0


def suite_violations(impl, folder: Path) -> tuple[int, int, list[str]]:
    """(schemas impl compiles, schemas, one line per instance the suite calls invalid that impl admits)
    over the JSON Schema Test Suite files (``*.json``: lists of {schema, tests}) in ``folder`` and its
    subfolders (a draft's ``optional/`` and ``optional/format/``)."""
    from textbound.oracles.structured_oracles import dumps_forms

    compiled, total, violations = 0, 0, []
    for path in sorted(folder.rglob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            total += 1
            try:
                pattern = re.compile(impl.json_schema_to_regex(group["schema"]))
            except ValueError:
                continue
            compiled += 1
            for test in group["tests"]:
                if not test["valid"] and any(pattern.fullmatch(text) for text in dumps_forms(test["data"])):
                    violations.append(f"{path.relative_to(folder)}: {group['description']}: {test['description']}")
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
