"""A decode that joins each id's own decode: a character split over several byte tokens comes out
as U+FFFD per piece, and a SentencePiece word's leading space is dropped or doubled at each id
(the per-token `convert_ids_to_tokens`-then-decode loops of early OpenAI-compatible front ends)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class Tokenizer(impl.Tokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return "".join(super(Tokenizer, self).decode([i], skip_special_tokens) for i in ids)
