"""transformers itself behind impl's chat names: an ``--impl`` module the chat checks must find no
fault with, so that a divergence they report on impl is impl's, not the harness's.

    textbound check --impl tests.transformers_chat_impl --component chat

``render_chat`` renders with a tokenizer that has no special tokens (oracles.chat_oracle.render);
``Tokenizer`` wraps ``PreTrainedTokenizerFast`` for a family folder and answers apply_chat_template without
tensors, as impl's contract asks. A wrapper of this shape is how another engine is checked.
"""
from __future__ import annotations

from pathlib import Path

from textbound.oracles.chat_oracle import render

__version__ = "transformers-adapter-1"


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    return render(template, messages, tools=tools, documents=documents, add_generation_prompt=add_generation_prompt,
                  continue_final_message=continue_final_message, **variables)


class Tokenizer:
    """transformers' tokenizer of a family folder, with impl's Tokenizer names the chat checks use."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        from transformers import PreTrainedTokenizerFast
        return cls(PreTrainedTokenizerFast.from_pretrained(str(path)))

    @property
    def chat_template(self):
        return self.tokenizer.chat_template

    def id_to_token(self, token_id: int) -> str | None:
        return self.tokenizer.convert_ids_to_tokens(token_id)

    def apply_chat_template(self, conversation, **kwargs):
        result = self.tokenizer.apply_chat_template(conversation, **kwargs)
        return dict(result) if hasattr(result, "keys") else result
