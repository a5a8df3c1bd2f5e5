"""The chat_template_kwargs switch enable_thinking never reaches the template: it renders as if the
client had not set it (the template's default, thinking on in most)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def render_chat(template, messages, **arguments):
    arguments.pop("enable_thinking", None)
    return impl.render_chat(template, messages, **arguments)
