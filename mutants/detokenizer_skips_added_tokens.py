"""skip_special_tokens drops every added token, the tool-call and reasoning markers among them (Qwen's
<tool_call>, <think>), before the parser can see them: vllm#25281 (tool-call tokens skipped ahead of the
tool parser); here the detokenizer reads every added token as special."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def __init__(self, tokenizer, skip_special_tokens=True, prompt_ids=None):
        super().__init__(tokenizer, skip_special_tokens, prompt_ids)
        if skip_special_tokens:
            self._skipped = self._skipped | frozenset(self._added_ids(tokenizer))

    @staticmethod
    def _added_ids(tokenizer):
        return getattr(getattr(tokenizer, "added", None), "ids", {}).values()

    def _decode(self, ids):
        return super()._decode([token_id for token_id in ids if token_id not in self._skipped])
