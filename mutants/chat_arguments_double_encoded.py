"""An earlier call's ``arguments`` are JSON-encoded again when they are already a JSON string: the
template sees '"{\\"city\\":\\"Zürich\\"}"' where transformers passes '{"city":"Zürich"}'."""
import json

from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names
from textbound.properties.conversations import with_call_arguments


def _encoded_again(arguments):
    return json.dumps(arguments) if isinstance(arguments, str) else arguments


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, with_call_arguments(messages, _encoded_again), **arguments)
