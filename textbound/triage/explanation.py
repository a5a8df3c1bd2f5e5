"""Divergences explained by the mutation catalogue: the bug classes of mutants/ as a diagnosis table.

A recorded divergence is *explained by* a mutant when that mutant, run on the record's minimized
input, gives exactly the recorded actual output: the engine then behaves, there, as impl with that
one bug (textbound.run.evidence finds them, so that a run names its root causes by them):

    >>> record = {"component": "tokenizer", "property": "encode", "family": "qwen",
    ...           "minimized_input": {"text": "\\uf9d8"}, "actual": [171, 100, 246], ...}
    >>> [m.name for m in explaining_mutants(record, {"qwen": "/path/to/qwen"})]
    ['tokenizer_nfc_skipped']
"""
from __future__ import annotations

from textbound.mutants import Mutant

from ..run.evidence import explaining_mutants, recorded_case

__all__ = ["explaining_mutants", "explanation_line", "recorded_case"]


def explanation_line(mutants: list[Mutant]) -> str:
    """``explanation_line([BY_NAME["tokenizer_nfc_skipped"]])`` ==
    "explained by tokenizer_nfc_skipped (the NFC normalizer skipped)"."""
    if not mutants:
        return "not explained by the mutation catalogue"
    return "explained by " + " or ".join(f"{m.name} ({m.bug})" for m in mutants)
