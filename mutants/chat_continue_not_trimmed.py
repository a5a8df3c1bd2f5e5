"""continue_final_message renders the whole conversation: the end of the final turn is not cut off."""
from impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with


def closed_turn(arguments):
    # Still refused beside add_generation_prompt, as the flags are checked; only the cut is missing.
    if arguments.get("add_generation_prompt"):
        return arguments
    return {**arguments, "continue_final_message": False}


render_chat = render_chat_with(request=closed_turn)
