"""Added tokens' normalized: false is ignored: every added token is matched in normalized text."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_flag, spec_rewritten

Tokenizer = spec_rewritten(added_tokens_flag("normalized", True))
