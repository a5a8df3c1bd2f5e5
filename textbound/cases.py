"""Inputs that case builders of several components share: corpus snippets and fuzzed families.

The case builders themselves live beside their checks, in ``textbound.checks``.
"""
from __future__ import annotations

from pathlib import Path

from .budget import Budget
from .sources import Family


def corpus_snippets(budget: Budget) -> list[str]:
    from corpora import text_cases
    snippets = [text for _, text in text_cases()]
    return snippets if budget.corpus_snippets is None else snippets[: budget.corpus_snippets]


def fuzz_families(seed: int, count: int, out_dir: Path) -> list[Family]:
    """Random tokenizer.json pipelines trained with `tokenizers`, saved where the report can replay them."""
    if count <= 0:
        return []
    from properties.pipelines import fuzz_families as build
    return [Family(name, path, "fuzz") for name, path, _ in build(seed, count, Path(out_dir))]
