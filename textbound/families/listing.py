"""What ``textbound families`` lists: every family a run can check, where it comes from, the model
type of its tokenizer, and whether a run naming no family checks it. Nothing is built to list it.

    >>> print(listing_text(listing(seed=0, fuzz_count=2)))        # doctest: +SKIP
    family                 source                model      checked by a run naming no family
    bert                   embedded              WordPiece  yes
    ...
    mistral-v3             from mistral-common   BPE        no: --family mistral-v3
    fuzz-0-0               fuzzed                WordLevel  yes: written into the report's fuzz/ folder
"""
from __future__ import annotations

from dataclasses import dataclass

from .family import NAMED_FAMILIES
from .fuzzed import fuzz_family_specs

FUZZED = "fuzzed"


@dataclass(frozen=True)
class Listed:
    """One family as ``textbound families`` lists it."""

    name: str
    source: str  # the label of its source ("embedded", "in $TEXTBOUND_MODELS", ...) or FUZZED
    model_type: str  # "BPE", "Unigram", "WordPiece", "WordLevel"
    in_default_run: bool


def listing(seed: int, fuzz_count: int) -> list[Listed]:
    """Every named family, source by source in the order ``resolve`` lists them, then the
    ``fuzz_count`` fuzzed families a run with ``seed`` draws."""
    named = [Listed(name, source.label, source.model_type(name), source.in_default_run)
             for source in NAMED_FAMILIES for name in source.names()]
    fuzzed = [Listed(name, FUZZED, spec["model"]["type"], True) for name, spec in fuzz_family_specs(seed, fuzz_count).items()]
    return named + fuzzed


def listing_text(families: list[Listed]) -> str:
    """The table of ``families``, then how to reach the sources that cannot be reached now."""
    rows = [("family", "source", "model", "checked by a run naming no family")]
    for family in families:
        if family.source == FUZZED:
            when = "yes: drawn by --seed and --budget, written into the report's fuzz/ folder"
        else:
            when = "yes" if family.in_default_run else f"no: --family {family.name}"
        rows.append((family.name, family.source, family.model_type, when))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[3]]) for row in rows]
    lines += [f"{source.label}: none ({hint})" for source in NAMED_FAMILIES if (hint := source.hint())]
    return "\n".join(lines) + "\n"
