"""Templates render without lstrip_blocks: the indentation before each block tag stays."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with

render_chat = render_chat_with(configure=lambda jinja: setattr(jinja, "lstrip_blocks", False))
