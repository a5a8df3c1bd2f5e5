"""U+00A0 (no-break space) read as a space before tokenizing: "ab\\u00a0cd" is encoded as "ab cd"."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import text_rewritten

Tokenizer = text_rewritten(lambda text: text.replace("\xa0", " "))
