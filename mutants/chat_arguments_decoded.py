"""An earlier call's ``arguments`` given as a JSON string are decoded to an object before the template
sees it (an empty or undecodable string read as {}, as vLLM's chat preparation does), where
transformers passes the string: a template writing a string as it is then writes the object through
tojson, '{"city":"Zürich"}' becoming '{"city": "Zürich"}'."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.properties.conversations import decoded_arguments, with_call_arguments


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, with_call_arguments(messages, decoded_arguments), **arguments)
