"""BPE's merge ranks are ignored: the leftmost adjacent pair whose join is a token merges first.

llama.cpp's SentencePiece tokenizer merges the pair of highest score, the leftmost on ties; a GGUF
that its converter wrote from a tokenizer.json without tokenizer.model gives every token the same
placeholder score, so every pair ties. On Llama 2's vocabulary ``" p"`` (``"▁▁p"``) is then
``["▁▁", "p"]``, where the merge ranks give ``["▁", "▁p"]``.
"""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.impl.tokenizer import models

from .base import restaged


class RanklessBPE(models.BPE):
    """Every way of joining two tokens into a token is a merge, all of one rank: a packed rule is
    its merged id alone, so _merge_by_queue's (rank, position) order is the position alone."""

    @property
    def merges(self) -> models.MergeRules:
        joins = self.__dict__.get("_joins")
        if joins is None:
            vocab, prefix = self.vocab, self.continuing_subword_prefix or ""
            joins = self.__dict__["_joins"] = {}
            for token, token_id in vocab.items():
                # A right symbol carries the continuing prefix, which the joined token has once, in front.
                first = len(prefix) + 1 if prefix and token.startswith(prefix) else 1
                for at in range(first, len(token)):
                    left, right = vocab.get(token[:at]), vocab.get(prefix + token[at:])
                    if left is not None and right is not None:
                        joins[models.pair_key(left, right)] = token_id
        return joins

    def _merge_by_scan(self, symbols, rules, ends, *unused, **unused_too):
        # The scan takes the smallest packed rule, here the smallest merged id: each piece by the queue instead.
        return [self._merge_by_queue(symbols[start:end]) if end - start > 1 else symbols[start:end]
                for start, end in zip([0, *ends[:-1]], ends)]


Tokenizer = restaged("model", models.BPE, RanklessBPE)
