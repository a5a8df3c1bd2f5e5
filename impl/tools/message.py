"""OpenAI chat-completion deltas: building them, and merging a stream of them into one message.

A parser emits three kinds of delta::

    {"content": "Hi"}
    {"reasoning_content": "Let me think"}
    {"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                     "function": {"name": "get_weather", "arguments": ""}}]}   # a call's first delta
    {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"city\\": "}}]}      # more of its arguments
    {"tool_calls": [{"index": 0, "function": {"arguments": "\\"Paris\\"}"}}]}

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

from .json_prefix import closers_for

CALL_ERROR_KEY = "error"  # the non-OpenAI key that flags a call impl returns but doubts
# How the error of a call that was streamed before its block turned out malformed begins.
MALFORMED_CALL = "malformed call"


@dataclass(frozen=True)
class ParsedCall:
    """One tool call read from the output: its name, its arguments as JSON text, an id if the format
    carries one, and an error when the call is returned but flagged (e.g. an unknown tool). Read from
    a block still being written, ``arguments`` is the text so far: a prefix of the complete call's
    that closing characters alone make valid JSON ("" for nothing yet)."""
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

    def call(self, call: ParsedCall) -> int:
        """Announces a call (its first delta) and passes on its arguments so far; returns its index."""
        index = self.call_count
        self.call_count += 1
        first = {"index": index, "id": call.id or f"call_{index}", "type": "function",
                 "function": {"name": call.name, "arguments": ""}}
        if call.error is not None:
            first[CALL_ERROR_KEY] = call.error
        self.deltas.append({"tool_calls": [first]})
        self.arguments(index, call.arguments)
        return index

    def arguments(self, index: int, text: str, error: str | None = None) -> None:
        """More of call ``index``'s arguments (and, for a call found malformed, its error)."""
        piece: dict = {"index": index, "function": {"arguments": text}}
        if error is not None:
            piece[CALL_ERROR_KEY] = error
        if text or error is not None:
            self.deltas.append({"tool_calls": [piece]})

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


class BlockCalls:
    """The calls of the call block being read: each announced as soon as the format has read its name
    (and id), its arguments passed on as they grow; at the block's end, held against the complete
    parse of the block.

    An announced call cannot be taken back. So when the block turns out malformed (its text then
    becomes content), or its complete parse differs from what was announced (a repeated key), each
    such call is closed into valid JSON with closing characters only and flagged
    ``"error": "malformed call: ..."``, and the parse's own calls follow as new ones.
    """

    def __init__(self, sink: DeltaSink, parameters: dict[str, dict] | None):
        self.sink, self.parameters = sink, parameters
        self.sent: list[tuple[int, ParsedCall]] = []  # (index, the call as announced, with the arguments sent)

    def update(self, calls: list[ParsedCall]) -> None:
        """The block's calls as read so far (each call's arguments extend those of the last update)."""
        for position, call in enumerate(calls):
            if position == len(self.sent):
                call = flag_unknown(call, self.parameters)
                self.sent.append((self.sink.call(call), call))
                continue
            index, sent = self.sent[position]
            if len(call.arguments) > len(sent.arguments) and call.arguments.startswith(sent.arguments):
                self.sink.arguments(index, call.arguments[len(sent.arguments):])
                self.sent[position] = (index, call)

    def finish(self, calls: list[ParsedCall] | None) -> bool:
        """Ends the block with its complete parse (None or []: malformed); returns whether it was calls."""
        calls = [flag_unknown(call, self.parameters) for call in calls or ()]
        confirmed = 0
        for (index, sent), call in zip(self.sent, calls):
            if (call.name, call.id) != (sent.name, sent.id) or not call.arguments.startswith(sent.arguments):
                break
            self.sink.arguments(index, call.arguments[len(sent.arguments):])
            confirmed += 1
        reason = "the complete call differs from the one streamed" if calls else "its block is content"
        for index, sent in self.sent[confirmed:]:
            self.sink.arguments(index, closers_for(sent.arguments), f"{MALFORMED_CALL}: {reason}")
        for call in calls[confirmed:]:
            self.sink.call(call)
        self.sent = []
        return bool(calls)


def assemble(deltas) -> dict:
    """The complete message that a stream of deltas adds up to.

    The message has ``role``, ``content`` (None when the answer is tool calls alone, as in OpenAI's
    API; "" when there is nothing at all), ``reasoning_content`` (None when there is none) and
    ``tool_calls`` only when there are calls.

    >>> assemble([{"content": "Hel"}, {"content": "lo"}])
    {'role': 'assistant', 'content': 'Hello', 'reasoning_content': None}
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
