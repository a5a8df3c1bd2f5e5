"""continue_final_message renders the whole conversation: the end of the final turn is not cut off."""
from impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with

render_chat = render_chat_with(request=lambda arguments: {**arguments, "continue_final_message": False})
