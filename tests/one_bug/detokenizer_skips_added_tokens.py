"""A detokenizer whose skip_special_tokens also leaves out the added tokens that are not special
(vllm#25281: tool-call tags such as "<tool_call>" added with special=False vanished from streamed
text). Where skip_special_tokens is False, it shows every token."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def __init__(self, tokenizer, skip_special_tokens=True, prompt_ids=None):
        self._added_ids = frozenset(tokenizer.added.by_id) if skip_special_tokens else frozenset()
        super().__init__(tokenizer, skip_special_tokens, prompt_ids)
        self._skipped = self._skipped | self._added_ids

    def _decode(self, ids):
        return super()._decode([i for i in ids if i not in self._added_ids])
