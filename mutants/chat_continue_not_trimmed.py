"""continue_final_message renders the whole conversation: the end of the final turn is not cut off
(the request is still checked as impl checks it)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def render_chat(template, messages, **arguments):
    cut = impl.render_chat(template, messages, **arguments)
    if not arguments.get("continue_final_message"):
        return cut
    return impl.render_chat(template, messages, **{**arguments, "continue_final_message": False})
