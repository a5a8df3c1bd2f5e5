"""A Split pre-tokenizer's invert is ignored: the pattern's matches are taken as the delimiters."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("Split", invert=False))
