"""A decode that drops one leading space (a detokenizer trimming the first token's "Ġ" or "▁")."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class Tokenizer(impl.Tokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return super().decode(ids, skip_special_tokens).removeprefix(" ")
