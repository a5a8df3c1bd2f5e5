"""Added tokens' lstrip is ignored: the spaces before such a token stay text."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_flag, spec_rewritten

Tokenizer = spec_rewritten(added_tokens_flag("lstrip", False))
