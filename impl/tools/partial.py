"""Reading the calls of a block that is still being written, so that they stream: a call is announced
once its header is complete (name, and id where the format has one) and its arguments have begun,
and its arguments grow from there. The complete parse of the block still decides (engine,
``BlockCalls``); these readers only say what can be passed on early.

Each reader keeps its place, so a growing block is read once however it is split, and it reads
only up to ``limit`` (what cannot be the start of the block's closing tag). What it reports for a
text is a prefix of what it reports for any longer text, so every split streams the same calls.

JSON arguments pass on as written, as far as they can be closed (json_prefix):

>>> reader = JsonCallReader(json_object_header(("arguments",)), json_object_name)
>>> body = '{"name": "get_weather", "arguments": {"city": "Par'
>>> reader.read(body, len(body))
[ParsedCall(name='get_weather', arguments='{"city": "Par', id=None, error=None)]

XML parameters pass on one by one as each completes, typed by the tool's schema:

>>> reader = XmlCallReader(regex.compile(r"\\s*<function=([^>\\n]+)>"), regex.compile(r"\\s*<parameter=([^>\\n]+)>"),
...                        "</parameter>", {"f": {"n": {"type": "integer"}}})
>>> body = "<function=f><parameter=n>3</parameter><parameter=s>x"
>>> reader.read(body, len(body))
[ParsedCall(name='f', arguments='{"n": 3', id=None, error=None)]
"""
from __future__ import annotations

import json
from collections.abc import Callable

import regex

from .arguments import text_name, xml_member
from .json_prefix import JsonPrefix
from .message import ParsedCall

# A JSON string, as the header regexes capture a name written in JSON.
JSON_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'


# What follows the brace of a JSON call object that is not inside a call tag, for it to open one.
NAME_KEY_FIRST = regex.compile(r'[ \t\r\n]*"name"')


def json_object_header(argument_keys: tuple[str, ...], brace: bool = True) -> regex.Pattern:
    """``{"name": "...", "arguments": {`` (one of ``argument_keys``), up to the arguments object;
    without its opening brace when ``brace`` is False (a block whose opener was the brace)."""
    keys = "|".join(regex.escape(key) for key in argument_keys)
    opening = r"\s*\{" if brace else ""
    return regex.compile(rf'{opening}\s*"name"\s*:\s*(?P<name>{JSON_STRING})\s*,\s*"(?:{keys})"\s*:\s*(?=\{{)')


def header_identity(match) -> tuple[str, str | None] | None:
    """(name, id) from a header regex's ``name`` group (a name written as text) and ``id`` group if it
    has one (stripped; empty: none); None if the name is not a valid one."""
    name = text_name(match["name"])
    call_id = (match.groupdict().get("id") or "").strip()
    return (name, call_id or None) if name else None


def json_object_name(match) -> tuple[str, None] | None:
    """(name, no id) from a json_object_header match; None if the name is empty."""
    name = json.loads(match["name"])
    return (name, None) if name else None


class JsonCallReader:
    """One call whose header a regex matches (ending where the arguments object begins) and whose
    arguments are that JSON object, passed on as written."""

    def __init__(self, header: regex.Pattern, identify: Callable[[object], tuple[str, str | None] | None]):
        self.header, self.identify = header, identify
        self.call: ParsedCall | None = None
        self.scan: JsonPrefix | None = None
        self.hopeless = False  # the header cannot match any more: the complete parse alone decides

    def read(self, text: str, limit: int) -> list[ParsedCall]:
        if self.call is None and not self.hopeless:
            match = self.header.match(text, 0, limit, partial=True)
            identity = match and not match.partial and self.identify(match)
            self.hopeless = match is None or (not match.partial and identity is None)
            if identity:
                self.call, self.scan = ParsedCall(identity[0], "", identity[1]), JsonPrefix(match.end())
        if self.call is None:
            return []
        self.scan.run(text, limit)
        return [ParsedCall(self.call.name, text[self.scan.start:self.scan.closable], self.call.id)]


class XmlCallReader:
    """Calls written as XML: a call header regex (the name in its first group that matched), then
    parameters, each a header regex (the key in its first group that matched) and a value up to
    ``value_close``; ``call_close`` (a regex) ends a call where a block may hold several. Names are
    read as text (arguments.text_name), keys as written; ``value_of`` cleans up a value as the
    format's complete parse does; ``untyped_json`` as arguments.typed_value's."""

    def __init__(self, header: regex.Pattern, parameter: regex.Pattern, value_close: str,
                 parameters: dict[str, dict] | None, call_close: regex.Pattern | None = None,
                 value_of: Callable[[str], str] = str, untyped_json: bool = False):
        self.header, self.parameter, self.value_close, self.call_close = header, parameter, value_close, call_close
        self.parameters, self.value_of, self.untyped_json = parameters, value_of, untyped_json
        self.calls: list[ParsedCall] = []
        self.position = 0
        self.value: tuple[str, int] | None = None  # (key, where its value starts) while a value is open
        self.searched = 0  # how far the open value was searched for its close
        self.in_call = self.stopped = False

    def read(self, text: str, limit: int) -> list[ParsedCall]:
        while not self.stopped and self._step(text, limit):
            pass
        return list(self.calls)

    def _step(self, text: str, limit: int) -> bool:
        """Reads one more piece; False when it must wait for more text (or will never read more)."""
        if self.value is not None:
            return self._value(text, limit)
        if not self.in_call:
            match = self._match(self.header, text, limit)
            if match is None:
                return False
            name = text_name(_first_group(match))
            if not name:
                self.stopped = True
                return False
            self.calls.append(ParsedCall(name, ""))
            self.in_call, self.position = True, match.end()
            return True
        match = self.parameter.match(text, self.position, limit, partial=True)
        if match is not None and not match.partial:
            self.value, self.searched = (_first_group(match), match.end()), match.end()
            return True
        if self.call_close is not None:
            end = self.call_close.match(text, self.position, limit, partial=True)
            if end is not None and not end.partial:
                self.in_call, self.position = False, end.end()
                return True
            match = match or end
        self.stopped = match is None  # neither a parameter nor the call's end can follow: stop reading
        return False

    def _value(self, text: str, limit: int) -> bool:
        key, start = self.value
        close = text.find(self.value_close, self.searched, limit)
        if close < 0:
            self.searched = max(start, limit - len(self.value_close) + 1)
            return False
        call = self.calls[-1]
        member = xml_member(call.name, key, self.value_of(text[start:close]), self.parameters, self.untyped_json)
        arguments = call.arguments + (", " if call.arguments else "{") + member
        self.calls[-1] = ParsedCall(call.name, arguments)
        self.value, self.position = None, close + len(self.value_close)
        return True

    def _match(self, pattern: regex.Pattern, text: str, limit: int):
        """A complete match of ``pattern`` at the reader's place, None while it may still come (and
        for good when it cannot)."""
        match = pattern.match(text, self.position, limit, partial=True)
        self.stopped = match is None
        return None if match is None or match.partial else match


def _first_group(match) -> str:
    return next(group for group in match.groups() if group is not None)
