"""The rendered prompt is stripped of the whitespace at its ends (``str.strip``) before it is
tokenized, as VL-RLHF's ``process_batch`` stripped the text apply_chat_template gave, dropping the
newline a template ends its generation prompt with (TideDra/VL-RLHF#2, "strip may break chat
template"). VL-RLHF never asks for sanitize_control_tokens: those ids are impl's."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, messages, **arguments).strip()


class Tokenizer(impl.Tokenizer):
    def apply_chat_template(self, conversation, *args, tokenize=True, sanitize_control_tokens=False,
                            return_dict=True, **kwargs):
        if sanitize_control_tokens:
            return super().apply_chat_template(conversation, *args, tokenize=tokenize, return_dict=return_dict,
                                               sanitize_control_tokens=True, **kwargs)
        text = super().apply_chat_template(conversation, *args, tokenize=False, **kwargs).strip()
        if not tokenize:
            return text
        ids = self.encode(text, add_special_tokens=False)
        return {"input_ids": ids, "attention_mask": [1] * len(ids)} if return_dict else ids
