"""A detokenizer that puts a space on each side of a special token it shows, as vLLM's
``spaces_between_special_tokens`` (on by default in its SamplingParams) joins the text between
added tokens with spaces where `tokenizers` joins it as it is (vllm/transformers_utils/detokenizer_utils.py,
``_convert_tokens_to_string_with_added_encoders``): "a<|endoftext|>b" streams as "a <|endoftext|> b"."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class IncrementalDetokenizer(impl.IncrementalDetokenizer):
    def __init__(self, tokenizer, skip_special_tokens=True, prompt_ids=None):
        super().__init__(tokenizer, skip_special_tokens, prompt_ids)
        self._specials = sorted(tokenizer.added.special_contents, key=len, reverse=True)

    def add(self, ids):
        text = super().add(ids)
        for special in self._specials:
            text = text.replace(special, f" {special} ")
        return text
