"""Added tokens' rstrip is ignored: the spaces after such a token stay text."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_flag, spec_rewritten

Tokenizer = spec_rewritten(added_tokens_flag("rstrip", False))
