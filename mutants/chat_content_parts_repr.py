"""Content given as a list of parts reaches the template as the list's Python repr, one string
("[{'type': 'text', 'text': 'Hi'}]"), where transformers passes the list."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def _as_repr(message):
    content = message.get("content") if isinstance(message, dict) else None
    return {**message, "content": str(content)} if isinstance(content, list) else message


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, [_as_repr(message) for message in messages], **arguments)
