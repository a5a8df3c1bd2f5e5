"""Metaspace prepend_scheme "first" is read as "always": a space is prepended after special tokens too."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("Metaspace", prepend_scheme="always"))
