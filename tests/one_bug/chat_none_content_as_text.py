"""A message's null content reaches the template as the text "None" (``str(None)``), as
llama_index's ChatML ``messages_to_prompt`` put an assistant tool-call turn's ``content=None`` into
the prompt (run-llama/llama_index#23142), and PrimeIntellect-ai/renderers' GLM and MiniMax
renderers did (PrimeIntellect-ai/renderers#131); transformers gives the template None."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


def _as_text(message):
    if isinstance(message, dict) and "content" in message and message["content"] is None:
        return {**message, "content": str(message["content"])}
    return message


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, [_as_text(message) for message in messages], **arguments)
