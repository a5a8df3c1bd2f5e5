"""raise_exception does nothing: a template's refusal (say, of an unknown role) renders anyway."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with

render_chat = render_chat_with(configure=lambda jinja: jinja.globals.update(raise_exception=lambda message: ""))
