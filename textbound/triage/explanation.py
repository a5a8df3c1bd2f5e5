"""Divergences explained by the mutation catalogue: the bug classes of mutants/ as a diagnosis table.

A recorded divergence is *explained by* a mutant when that mutant, run on the record's minimized
input, gives exactly the recorded actual output: the engine then behaves, there, as impl with that
one bug. ``textbound triage`` names the explanation of each signature's smallest example:

    >>> record = {"component": "tokenizer", "property": "encode", "family": "qwen",
    ...           "minimized_input": {"text": "\\uf9d8"}, "actual": [171, 100, 246], ...}
    >>> [m.name for m in explaining_mutants(record, {"qwen": "/path/to/qwen"})]
    ['tokenizer_nfc_skipped']
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from textbound.mutants import CATALOGUE, Mutant

from ..naming.divergence import Case, plain_json


def recorded_case(record: dict) -> Case:
    """The minimized case of a divergences.jsonl record."""
    return Case(record["component"], record["property"], record["family"], record["minimized_input"])


@cache
def _mutant_subject(module: str, family: str, folder: str):
    """A mutant on one family, loaded once for every record triaged."""
    from ..checks import Subject
    from ..plan.implementation import Implementation
    return Subject(family, Path(folder), Implementation(module))


def explaining_mutants(record: dict, families: dict[str, str]) -> list[Mutant]:
    """The mutants of the record's component whose output on its minimized input is its actual one;
    none when the family's folder is gone."""
    from ..checks import run_check

    folder = families.get(record.get("family"))
    if not folder or not Path(folder).is_dir():
        return []
    case, actual = recorded_case(record), record.get("actual")
    found = []
    for mutant in (m for m in CATALOGUE if m.component == record["component"]):
        try:
            divergence = run_check(_mutant_subject(mutant.module, case.family, folder), case)
        except Exception:  # noqa: BLE001 - a mutant that cannot run this case explains nothing
            continue
        if divergence is not None and not divergence.kind.startswith("raised ") \
                and plain_json(divergence.actual) == actual:
            found.append(mutant)
    return found


def explanation_line(mutants: list[Mutant]) -> str:
    """``explanation_line([BY_NAME["tokenizer_nfc_skipped"]])`` ==
    "explained by tokenizer_nfc_skipped (the NFC normalizer skipped)"."""
    if not mutants:
        return "not explained by the mutation catalogue"
    return "explained by " + " or ".join(f"{m.name} ({m.bug})" for m in mutants)
