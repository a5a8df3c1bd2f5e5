"""What a family is, and the registry of the sources that know families by name.

A leaf module: each source module registers here when it is imported, and nothing here imports
them (the package's ``__init__`` imports each source by name, in the order ``resolve`` lists their
families). A family is a folder holding a tokenizer.json, and whatever else its source put there
for the oracles (a Mistral family's ``mistral_source.json`` names the vocabulary it came from).

    named_families(NamedFamilies("embedded", embedded_family_names, embedded_family, in_default_run=True,
                                 model_type=spec_model_type))
    NAMED_FAMILIES[0].family("gpt2")    # -> Family("gpt2", ~/.cache/textbound/families/gpt2-..., "embedded")
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class FamilyError(Exception):
    """A family could not be found or built; the run cannot be set up."""


@dataclass(frozen=True)
class Family:
    name: str
    path: Path
    origin: str  # "embedded", "models", "mistral", "folder", "gguf", "hub" or "fuzz"


@dataclass(frozen=True)
class NamedFamilies:
    """A source whose families ``--family NAME`` reaches.

    ``label`` introduces its names in the unknown-family error ("embedded", "in $TEXTBOUND_MODELS");
    ``names`` lists them cheaply, without building any; ``family`` builds one; ``in_default_run``
    says whether a run naming no family checks them all; ``model_type`` names one's tokenizer model
    as tokenizer.json will ("BPE", "Unigram", "WordPiece", "WordLevel"), without building it (what
    ``textbound families`` lists); ``hint`` says, when the source cannot be reached, how to reach
    it (None when it can).
    """

    label: str
    names: Callable[[], list[str]]
    family: Callable[[str], Family]
    in_default_run: bool
    model_type: Callable[[str], str]
    hint: Callable[[], str | None] = lambda: None


NAMED_FAMILIES: list[NamedFamilies] = []


def named_families(source: NamedFamilies) -> NamedFamilies:
    """Registers ``source``; ``resolve`` consults the sources in the order they registered."""
    NAMED_FAMILIES.append(source)
    return source
