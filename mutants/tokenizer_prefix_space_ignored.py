"""The ByteLevel pre-tokenizer's add_prefix_space is ignored: no space is added before the text."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("ByteLevel", add_prefix_space=False))
