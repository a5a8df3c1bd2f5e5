"""One decode with two bugs: it drops one leading space (tests/one_bug/decode_drops_leading_space)
and collapses trailing whitespace (mutants.tokenizer_trailing_whitespace_collapsed): two shapes of
"drops" from one culprit, at two places, which stay two root causes."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names
from textbound.mutants.tokenizer_trailing_whitespace_collapsed import TRAILING_WHITESPACE


class Tokenizer(impl.Tokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return TRAILING_WHITESPACE.sub(r"\1", super().decode(ids, skip_special_tokens)).removeprefix(" ")
