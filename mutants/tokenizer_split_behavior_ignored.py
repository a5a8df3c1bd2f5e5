"""A Split pre-tokenizer's behavior is ignored: every match is isolated."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ignore_field, spec_rewritten

Tokenizer = spec_rewritten(ignore_field("Split", behavior="Isolated"))
