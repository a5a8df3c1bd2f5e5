"""Added tokens' single_word is ignored: a token is split off inside a word too."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_flag, spec_rewritten

Tokenizer = spec_rewritten(added_tokens_flag("single_word", False))
