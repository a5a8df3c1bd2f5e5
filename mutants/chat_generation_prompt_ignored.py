"""add_generation_prompt is ignored: the assistant's header is never appended."""
from impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with


def no_prompt(arguments):
    # Still refused beside continue_final_message, as the flags are checked; only the header is missing.
    if arguments.get("continue_final_message"):
        return arguments
    return {**arguments, "add_generation_prompt": False}


render_chat = render_chat_with(request=no_prompt)
