"""tojson escapes non-ASCII characters ("é" -> "\\u00e9"), as Jinja's own json.dumps default does."""
import json

from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import render_chat_with


def tojson(value, ensure_ascii=True, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=True, indent=indent, separators=separators, sort_keys=sort_keys)


render_chat = render_chat_with(configure=lambda jinja: jinja.filters.update(tojson=tojson))
