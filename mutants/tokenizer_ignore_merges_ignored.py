"""BPE's ignore_merges is ignored: a word in the vocabulary is still built by merges."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("BPE", ignore_merges=False))
