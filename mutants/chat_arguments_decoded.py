"""An earlier call's ``arguments`` given as a JSON string are decoded to an object before the template
sees it (an empty or undecodable string read as {}), where transformers passes the string: a template
writing a string as it is then writes the object through tojson, '{"city":"Zürich"}' becoming
'{"city": "Zürich"}'."""
import json

from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def _decoded(arguments):
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        value = {}
    return value if isinstance(value, dict) else {}


def _with_decoded_arguments(message):
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return message
    return {**message, "tool_calls": [
        {**call, "function": {**call["function"], "arguments": _decoded(call["function"].get("arguments"))}}
        if isinstance(call, dict) and isinstance(call.get("function"), dict) else call for call in calls]}


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, [_with_decoded_arguments(message) for message in messages], **arguments)
