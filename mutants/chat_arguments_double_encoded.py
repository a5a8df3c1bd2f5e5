"""An earlier call's ``arguments`` are JSON-encoded again when they are already a JSON string: the
template sees '"{\\"city\\":\\"Zürich\\"}"' where transformers passes '{"city":"Zürich"}'."""
import json

from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def _encoded_again(message):
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return message
    return {**message, "tool_calls": [
        {**call, "function": {**call["function"], "arguments": json.dumps(call["function"]["arguments"])}}
        if isinstance(call, dict) and isinstance(call.get("function"), dict)
        and isinstance(call["function"].get("arguments"), str) else call for call in calls]}


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, [_encoded_again(message) for message in messages], **arguments)
