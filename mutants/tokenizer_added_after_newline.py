"""Added tokens are not split off right after a newline."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_missed, char_before

Tokenizer = added_tokens_missed(char_before(lambda char: char == "\n"))
