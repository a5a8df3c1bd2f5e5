"""The NFC normalizer is skipped: decomposed text reaches the model as written."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import drop_normalizer, spec_rewritten

Tokenizer = spec_rewritten(drop_normalizer("NFC"))
