"""Fuzzed families: random pipelines (properties.pipelines draws their specs), trained on the
corpora as the embedded families are, and saved where the report can replay them.

    >>> [family.name for family in fuzz_families(seed=7, count=2, out_dir=report_dir / "fuzz")]  # doctest: +SKIP
    ['fuzz-7-0', 'fuzz-7-1']
"""
from __future__ import annotations

from pathlib import Path

from textbound.properties.pipelines import fuzz_specs
from textbound.properties.strategies import draw_examples

from .embedded import train
from .family import Family


def fuzz_families(seed: int, count: int, out_dir: Path) -> list[Family]:
    """``count`` fuzzed families, the same ones for the same seed, each in a folder of ``out_dir``."""
    return [Family(name, write_family(spec, Path(out_dir) / name), "fuzz")
            for name, spec in fuzz_family_specs(seed, count).items()]


def fuzz_family_specs(seed: int, count: int) -> dict[str, dict]:
    """The specs of ``fuzz_families(seed, count, ...)`` by name, untrained:
    ``list(fuzz_family_specs(7, 2)) == ["fuzz-7-0", "fuzz-7-1"]``."""
    return {f"fuzz-{seed}-{index}": spec for index, spec in enumerate(draw_examples(fuzz_specs(), count, seed))}


def write_family(spec: dict, folder: Path) -> Path:
    """Trains ``spec`` and writes its tokenizer.json into ``folder``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(train(spec), encoding="utf-8")
    return folder
