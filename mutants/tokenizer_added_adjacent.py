"""An added token right after another added token is not split off ("<|im_end|><|im_start|>")."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import added_tokens_missed

Tokenizer = added_tokens_missed(lambda text, start, stop, previous: start == previous)
