"""An empty tools list reaches the template as None (``tools or None``): templates that test
``tools is not none`` render their tool section for ``[]`` in transformers, never here."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, messages, **{**arguments, "tools": arguments.get("tools") or None})
