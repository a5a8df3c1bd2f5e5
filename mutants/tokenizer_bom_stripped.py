"""A leading byte-order mark (U+FEFF) dropped before tokenizing: "\\ufeffab" is encoded as "ab"."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import text_rewritten

Tokenizer = text_rewritten(lambda text: text.removeprefix("\ufeff"))
