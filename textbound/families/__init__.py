"""Families: folders holding a tokenizer.json (and what else their source wrote), from wherever
they come.

``family`` is the leaf that defines them and holds the registry of sources that know families by
name; each such source registers there when it is imported, and this package imports every source
by name, in the order ``resolve`` lists their families: embedded (trained from
corpora/tokenizer_specs), the models folder ($TEXTBOUND_MODELS), then mistral-common's
vocabularies (converted on first use). ``--model-dir`` folders, ``--hub`` repositories and fuzzed
pipelines are reached by their own functions. ``listing`` names them all with their model types
(``textbound families``) without building any.

    >>> [family.origin for family in resolve(["gpt2"], [], [])]
    ['embedded']

Imports ``files`` (and the oracles, corpora and properties that build families); nothing else of the
harness.
"""
from . import cache, embedded, folders, fuzzed, gguf, hub, listing, mistral, validate
from .embedded import build_family, embedded_family, embedded_family_names, load_spec
from .family import NAMED_FAMILIES, Family, FamilyError, NamedFamilies, named_families
from .folders import MODELS_ENV, folder_families, folder_family, models_dir
from .fuzzed import fuzz_families, write_family
from .listing import listing_text
from .gguf import gguf_family
from .hub import hub_family
from .mistral import build_mistral_family, mistral_family, mistral_family_names
from .resolver import resolve
from .validate import check_family_files

__all__ = [
    "MODELS_ENV", "NAMED_FAMILIES", "Family", "FamilyError", "NamedFamilies", "build_family", "build_mistral_family",
    "cache", "check_family_files", "embedded", "embedded_family", "embedded_family_names", "folder_families",
    "folder_family", "folders", "fuzz_families", "fuzzed", "gguf", "gguf_family", "hub", "hub_family", "listing",
    "listing_text", "load_spec",
    "mistral", "mistral_family", "mistral_family_names", "models_dir", "named_families", "resolve", "validate",
    "write_family",
]
