"""An implementation providing only ``render_chat``: its chat templates are checked on rendered text,
and the chat properties needing a Tokenizer (ids, sanitized_ids) are reported as not provided."""
from textbound.impl import render_chat  # noqa: F401 - the one public name this implementation exposes

__version__ = "render-chat-only-1"
