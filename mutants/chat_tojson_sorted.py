"""tojson sorts object keys, so tool schemas reach the model in another order than written."""
import json

from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=True):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=True)


render_chat = render_chat_with(configure=lambda jinja: jinja.filters.update(tojson=tojson))
