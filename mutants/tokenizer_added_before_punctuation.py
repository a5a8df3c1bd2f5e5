"""Added tokens are not split off when punctuation follows them ("</s>." stays text)."""
import unicodedata

from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_missed, char_after

Tokenizer = added_tokens_missed(char_after(lambda char: unicodedata.category(char).startswith("P")))
