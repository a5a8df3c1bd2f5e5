"""add_generation_prompt is ignored: the assistant's header is never appended."""
from impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with

render_chat = render_chat_with(request=lambda arguments: {**arguments, "add_generation_prompt": False})
