"""Pre-tokenization whose letter class is ASCII-only (a regex engine reading \\p{L} as [A-Za-z], as
JavaScript's \\w is): non-ASCII words are cut where the reference keeps them whole."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names
from textbound.mutants.base import nodes, spec_rewritten


def _ascii_letters(spec: dict) -> None:
    for node in nodes(spec.get("pre_tokenizer"), "Split"):
        pattern = node.get("pattern", {})
        if "Regex" in pattern:
            pattern["Regex"] = pattern["Regex"].replace(r"\p{L}+", "[A-Za-z]+").replace(r"\p{L}", "A-Za-z")


Tokenizer = spec_rewritten(_ascii_letters)
