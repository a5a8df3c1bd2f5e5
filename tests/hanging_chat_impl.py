"""A deliberately hanging chat renderer: ``render_chat`` spins for ever, as a template engine stuck
in a loop would (no exception, no answer). Everything else is impl's."""
from textbound.impl import *  # noqa: F403 - every other public name is impl's own

__version__ = "hanging-chat-1"


def render_chat(template: str, messages: list, **variables) -> str:
    while True:
        pass
