"""decode's skip_special_tokens is ignored: special tokens are always shown."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class Tokenizer(impl.Tokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return super().decode(ids, skip_special_tokens=False)
