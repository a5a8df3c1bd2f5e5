"""A deliberately broken chat implementation: impl with bugs the chat checks must catch.

``BUGS`` names the bugs switched on (all of them unless ``$TEXTBOUND_CHAT_BUGS`` lists some, comma
separated); a test sets it to one bug at a time:

- ``trim_blocks``: renders as if trim_blocks were off (the newline after a block tag is kept);
- ``tojson_ascii``: ``tojson`` escapes non-ASCII characters (Jinja's and json's default);
- ``raise_swallowed``: a template's ``raise_exception`` (any TemplateError) gives an empty prompt;
- ``continue_untrimmed``: continue_final_message renders the final message closed, not cut open;
- ``sanitize_ignored``: ``Tokenizer.apply_chat_template`` ignores sanitize_control_tokens;
- ``mutates_messages``: the reasoning aliases are written into the caller's messages.
"""
from __future__ import annotations

import os
import re

import jinja2

from textbound.impl import CHATML_TEMPLATE, render_chat as _render_chat
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "broken-chat-1"
ALL_BUGS = frozenset({"trim_blocks", "tojson_ascii", "raise_swallowed", "continue_untrimmed", "sanitize_ignored",
                      "mutates_messages"})
BUGS = frozenset(os.environ["TEXTBOUND_CHAT_BUGS"].split(",")) if os.environ.get("TEXTBOUND_CHAT_BUGS") else ALL_BUGS

# A block tag closed without "-" and followed by a newline: trim_blocks removes that newline.
_BLOCK_END_NEWLINE = re.compile(r"(?<!-)%\}\n")
_TOJSON = re.compile(r"\|\s*tojson\b(\s*\()?")


def _broken_template(template: str) -> str:
    if "trim_blocks" in BUGS:  # doubling the newline leaves one after trimming: trim_blocks off
        template = _BLOCK_END_NEWLINE.sub("%}\n\n", template)
    if "tojson_ascii" in BUGS:
        template = _TOJSON.sub(lambda m: "| tojson(ensure_ascii=True, " if m.group(1) else "| tojson(ensure_ascii=True)",
                               template)
    return template


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    if "mutates_messages" in BUGS:
        for message in messages:
            if message.get("reasoning") is not None:
                message["reasoning_content"] = message["reasoning"]
    if "continue_untrimmed" in BUGS and continue_final_message and not add_generation_prompt:
        continue_final_message = False
    try:
        return _render_chat(_broken_template(template), messages, tools=tools, documents=documents,
                            add_generation_prompt=add_generation_prompt,
                            continue_final_message=continue_final_message, **variables)
    except jinja2.TemplateError:
        if "raise_swallowed" in BUGS:
            return ""
        raise


class Tokenizer(_Tokenizer):
    def apply_chat_template(self, conversation, *args, sanitize_control_tokens=False, **kwargs):
        if "sanitize_ignored" in BUGS:
            sanitize_control_tokens = False
        return super().apply_chat_template(conversation, *args, sanitize_control_tokens=sanitize_control_tokens,
                                           **kwargs)


__all__ = ["ALL_BUGS", "BUGS", "CHATML_TEMPLATE", "Tokenizer", "render_chat"]
