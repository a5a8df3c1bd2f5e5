"""add_generation_prompt is ignored: the assistant's header is never appended (the request is still
checked as impl checks it)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def render_chat(template, messages, **arguments):
    impl.render_chat(template, messages, **arguments)
    return impl.render_chat(template, messages, **{**arguments, "add_generation_prompt": False})
