"""Added tokens are not split off right after a digit ("2<|im_end|>" is text for the model)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_missed, char_before

Tokenizer = added_tokens_missed(char_before(str.isdigit))
