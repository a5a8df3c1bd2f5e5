"""`trim` strips ASCII whitespace only: "\\u2008hi\\u3000" | trim -> "\\u2008hi\\u3000" (Jinja2: "hi"),
as llama.cpp's Jinja engine does (common/jinja/string.cpp tests each byte with isspace)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with

ASCII_WHITESPACE = " \t\n\r\v\f"


def trim(value, chars=None):
    return str(value).strip(ASCII_WHITESPACE if chars is None else chars)


render_chat = render_chat_with(configure=lambda jinja: jinja.filters.update(trim=trim))
