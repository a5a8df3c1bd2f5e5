"""OpenAI chat-completion deltas: building them, and merging a stream of them into one message.

A parser emits three kinds of delta::

    {"content": "Hi"}
    {"reasoning_content": "Let me think"}
    {"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                     "function": {"name": "get_weather", "arguments": ""}}]}   # a call's first delta
    {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"city\\": \\"Paris\\"}"}}]}

``assemble`` merges them as OpenAI clients do (strings concatenated, calls merged by index) and
shapes the message the way OpenAI's API does:

>>> assemble([{"content": "Hi"}, {"content": "!"}])
{'role': 'assistant', 'content': 'Hi!', 'reasoning_content': None}
>>> assemble([{"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
...            "function": {"name": "f", "arguments": ""}}]},
...           {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}])["content"] is None
True
"""
from __future__ import annotations

from dataclasses import dataclass

CALL_ERROR_KEY = "error"  # the non-OpenAI key that flags a call impl returns but doubts


@dataclass(frozen=True)
class ParsedCall:
    """One tool call read from the output: its name, its arguments as JSON text, an id if the format
    carries one, and an error when the call is returned but flagged (e.g. an unknown tool)."""
    name: str
    arguments: str
    id: str | None = None
    error: str | None = None


def flag_unknown(call: ParsedCall, parameters: dict[str, dict] | None) -> ParsedCall:
    """The call, flagged if a tools list was given and does not name it."""
    if parameters is None or call.name in parameters or call.error:
        return call
    return ParsedCall(call.name, call.arguments, call.id, f"unknown tool {call.name!r}")


class DeltaSink:
    """Collects the deltas of one ``feed``: adjacent text of one kind is merged into one delta."""

    def __init__(self):
        self.deltas: list[dict] = []
        self.call_count = 0

    def content(self, text: str) -> None:
        self._text("content", text)

    def reasoning(self, text: str) -> None:
        self._text("reasoning_content", text)

    def call(self, call: ParsedCall) -> None:
        index = self.call_count
        self.call_count += 1
        first = {"index": index, "id": call.id or f"call_{index}", "type": "function",
                 "function": {"name": call.name, "arguments": ""}}
        if call.error is not None:
            first[CALL_ERROR_KEY] = call.error
        self.deltas.append({"tool_calls": [first]})
        self.deltas.append({"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]})

    def take(self) -> list[dict]:
        deltas, self.deltas = self.deltas, []
        return deltas

    def _text(self, key: str, text: str) -> None:
        if not text:
            return
        if self.deltas and list(self.deltas[-1]) == [key]:
            self.deltas[-1][key] += text
        else:
            self.deltas.append({key: text})


def assemble(deltas) -> dict:
    """The complete message that a stream of deltas adds up to.

    The message has ``role``, ``content`` (None when the answer is tool calls alone, as in OpenAI's
    API; "" when there is nothing at all), ``reasoning_content`` (None when there is none) and
    ``tool_calls`` only when there are calls.
    """
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict] = {}
    for delta in deltas:
        content.append(delta.get("content") or "")
        reasoning.append(delta.get("reasoning_content") or "")
        for piece in delta.get("tool_calls") or ():
            _merge_call(calls, piece)
    return finish_message("".join(content), "".join(reasoning), [calls[i] for i in sorted(calls)])


def finish_message(content: str, reasoning: str, calls: list[dict]) -> dict:
    message = {"role": "assistant", "content": content or (None if calls else ""),
               "reasoning_content": reasoning or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _merge_call(calls: dict[int, dict], piece: dict) -> None:
    index = piece["index"]
    call = calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
    for key, value in piece.items():
        if key == "function":
            for field, text in value.items():
                call["function"][field] = call["function"].get(field, "") + (text or "")
        elif key != "index":
            call[key] = value
