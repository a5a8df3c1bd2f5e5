"""Content given as parts is flattened to one string, the text parts joined with "\\n", before the
template sees it (what vLLM's "string" content format does), where transformers passes the list."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def _flattened(message):
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    texts = [part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return {**message, "content": "\n".join(texts)}


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, [_flattened(message) for message in messages], **arguments)
