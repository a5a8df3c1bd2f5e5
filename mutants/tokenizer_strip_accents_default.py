"""BertNormalizer's strip_accents null is read as false (tokenizers: null follows lowercase)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("BertNormalizer", strip_accents=False))
