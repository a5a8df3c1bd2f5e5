"""``textbound bench --schemas DIR``: how many of a folder's JSON Schemas each engine compiles.

Every schema is compiled by impl's ``json_schema_to_regex``, outlines-core's
``build_regex_from_schema`` and llguidance's grammar compiler, each in a fresh (forked) process with
a time limit, and tallied as compiled / refused / timed out with the most frequent refusal reasons.
Example: ``textbound bench --schemas path/to/schemastore/jsondata`` prints one row per engine.
"""
from __future__ import annotations

import json
import multiprocessing
import re
import sys
from collections import Counter
from pathlib import Path

SCHEMA_TIMEOUT = 10.0  # seconds one engine may take on one schema
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


def _engines(impl) -> dict:
    from oracles.structured_oracles import outlines_regex

    return {"impl": impl.json_schema_to_regex, "outlines-core": outlines_regex, "llguidance": _llguidance_compile}


def _compile(engine, schema, results) -> None:
    try:
        engine(schema)
        results.put(("compiled", ""))
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
    for name, engine in _engines(impl).items():
        outcomes, reasons = Counter(), Counter()
        for schema in schemas.values():
            outcome, reason = compile_in_child(engine, schema, timeout)
            outcomes[outcome] += 1
            if outcome == "refused":
                reasons[reason_class(reason)] += 1
        top = ", ".join(f"{reason} {count}" for reason, count in reasons.most_common(TOP_REASONS))
        print(f"| {name} | {outcomes['compiled']} | {outcomes['refused']} | {outcomes['timed out']} | {top} |",
              flush=True)
    return 0
