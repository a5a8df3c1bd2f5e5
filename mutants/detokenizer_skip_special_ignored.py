"""The stream ignores skip_special_tokens: special tokens are always shown."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def __init__(self, tokenizer, skip_special_tokens=True, prompt_ids=None):
        super().__init__(tokenizer, False, prompt_ids)
