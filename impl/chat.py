"""Chat templates: messages to a prompt, as transformers' apply_chat_template renders them."""
from __future__ import annotations

CHATML_TEMPLATE = ""


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    raise NotImplementedError("render_chat")


def apply_chat_template(tokenizer, conversation, tools=None, documents=None, chat_template=None,
                        add_generation_prompt=False, continue_final_message=False, tokenize=True,
                        sanitize_control_tokens=False, return_dict=True, return_assistant_tokens_mask=False,
                        **kwargs):
    raise NotImplementedError("apply_chat_template")
