"""Call arguments: reading them from JSON text exactly, and typing XML parameter values by schema.

JSON-bodied formats keep the arguments byte for byte as the model wrote them:

>>> json_members('{"name": "f", "arguments": {"a": 1,  "b": [2]}}')["arguments"]
'{"a": 1,  "b": [2]}'
>>> arguments_from_json('"{\\\\"a\\\\": 1}"')     # arguments given as a JSON-encoded string
'{"a": 1}'
>>> JsonScan().run('{"a": "}"} tail')      # where a bracketed value ends, strings skipped
10

XML-bodied formats write values as text; the tool's JSON schema says what type each one is:

>>> typed_value("3", {"type": "integer"}), typed_value("3", {"type": "string"}), typed_value("3", None)
(3, '3', '3')
"""
from __future__ import annotations

import json

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
_CLOSERS = {"{": "}", "[": "]"}


def json_members(text: str) -> dict[str, str] | None:
    """The raw JSON text of each member of the one object ``text`` holds, or None if it holds no
    object (or more than one thing). A repeated key keeps its last value, as json.loads does."""
    members = _container_entries(text, "{", "}", keyed=True)
    return None if members is None else dict(members)


def _container_entries(text: str, opening: str, closing: str, keyed: bool) -> list | None:
    """The (key, raw value) pairs of the one object, or the raw items of the one array, that
    ``text`` holds; None if it holds anything else."""
    index = _skip_whitespace(text, 0)
    if not text.startswith(opening, index):
        return None
    entries: list = []
    index = _skip_whitespace(text, index + 1)
    if text.startswith(closing, index):
        return entries if _skip_whitespace(text, index + 1) == len(text) else None
    while True:
        try:
            if keyed:
                key, index = _DECODER.raw_decode(text, index)
                index = _skip_whitespace(text, index)
                if not isinstance(key, str) or not text.startswith(":", index):
                    return None
                index = _skip_whitespace(text, index + 1)
            _, end = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError:
            return None
        entries.append((key, text[index:end]) if keyed else text[index:end])
        index = _skip_whitespace(text, end)
        if text.startswith(",", index):
            index = _skip_whitespace(text, index + 1)
        elif text.startswith(closing, index):
            return entries if _skip_whitespace(text, index + 1) == len(text) else None
        else:
            return None


def arguments_from_json(raw: str | None) -> str | None:
    """The arguments text for a raw JSON value: an object as written, a JSON-encoded object string
    decoded, a missing value as ``{}``; None for anything else (not an object)."""
    if raw is None:
        return "{}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict):
        return raw.strip()
    if isinstance(value, str):
        try:
            return value.strip() if isinstance(json.loads(value), dict) else None
        except json.JSONDecodeError:
            return None
    return None


def json_items(text: str) -> list[str] | None:
    """The raw JSON text of each item of the one array ``text`` holds, or None if it holds no array.

    >>> json_items(' [{"a": 1}, 2 ] ')
    ['{"a": 1}', '2']
    """
    return _container_entries(text, "[", "]", keyed=False)


def json_name(raw: str | None) -> str | None:
    """A call name from a raw JSON value: a non-empty string, else None."""
    if raw is None:
        return None
    value = json.loads(raw)  # raw came out of json_members: valid JSON
    return value if isinstance(value, str) and value else None


class JsonScan:
    """Reads JSON-ish text left to right once, however often it grows: where strings are, how deep
    the brackets go, and where a tag first stands outside strings. Keep one per growing text.

    >>> scan = JsonScan(tag="</x>")
    >>> scan.run('{"a": "</x>"'), scan.run('{"a": "</x>"}</'), scan.run('{"a": "</x>"}</x>')
    (None, None, 13)
    >>> JsonScan().run('[{"a": "]"}, 2] tail'), scan.balanced_end
    (15, 13)
    """

    def __init__(self, tag: str | None = None, start: int = 0):
        self.tag = tag  # None: look for the end of the bracketed value that opens at ``start``
        self.position = start
        self.in_string = self.escaped = False
        self.expected: list[str] = []
        self.balanced_end: int | None = None  # just past the value, once its brackets balance

    def run(self, text: str) -> int | None:
        """The answer so far for ``text`` (which extends the text of earlier calls): the tag's position,
        or without a tag the end of the bracketed value; None while not yet found."""
        for index in range(self.position, len(text)):
            char = text[index]
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif self.tag is not None and char == self.tag[0] and self.tag.startswith(text[index:index + len(self.tag)]):
                self.position = index
                return index if text.startswith(self.tag, index) else None  # else: may be the tag's start
            elif char == '"':
                self.in_string = True
            elif char in _CLOSERS:
                self.expected.append(_CLOSERS[char])
            elif char in "}]" and self.balanced_end is None:
                # A closer that does not match ends the value too: it will not parse.
                if not self.expected or char != self.expected.pop() or not self.expected:
                    self.balanced_end = index + 1
                    if self.tag is None:
                        self.position = index + 1
                        return self.balanced_end
        self.position = len(text)
        return None


def find_outside_spans(text: str, tag: str, span_open: str, span_close: str) -> int:
    """The first position of ``tag`` in ``text`` outside ``span_open``...``span_close`` spans (values
    in XML-like formats, which may contain anything), or -1 (also while a span is still open).

    >>> find_outside_spans("<v>a</end></v></end>", "</end>", "<v>", "</v>")
    14
    """
    index = 0
    while True:
        tag_at, span_at = text.find(tag, index), text.find(span_open, index)
        if tag_at < 0 or span_at < 0 or tag_at < span_at:
            return tag_at
        span_end = text.find(span_close, span_at + len(span_open))
        if span_end < 0:
            return -1
        index = span_end + len(span_close)


def xml_arguments(name: str, pairs, parameters: dict[str, dict] | None) -> str:
    """The JSON arguments of an XML-bodied call from its (key, value text) pairs, each value typed by
    the tool's schema for that key: the members joined in the order written, as a stream passes them
    on (a repeated key stays repeated; as JSON, the last one counts).

    >>> xml_arguments("f", [("a", "1"), ("b", "x")], {"f": {"a": {"type": "integer"}}})
    '{"a": 1, "b": "x"}'
    """
    return "{" + ", ".join(xml_member(name, key, value, parameters) for key, value in pairs) + "}"


def xml_member(name: str, key: str, value: str, parameters: dict[str, dict] | None) -> str:
    """One ``"key": value`` member of an XML-bodied call's JSON arguments."""
    schema = ((parameters or {}).get(name) or {}).get(key)
    return f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(typed_value(value, schema), ensure_ascii=False)}"


def call_from_json(text: str, name_key: str = "name", argument_keys=("arguments", "parameters")):
    """(name, arguments text) of a call written as one JSON object, or None if it is not one."""
    members = json_members(text)
    if members is None:
        return None
    name = json_name(members.get(name_key))
    raw = next((members[key] for key in argument_keys if key in members), None)
    arguments = arguments_from_json(raw)
    if name is None or arguments is None:
        return None
    return name, arguments


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def tool_parameters(tools) -> dict[str, dict] | None:
    """Each tool's ``properties`` schema by tool name, from an OpenAI ``tools`` list (None: no list)."""
    if tools is None:
        return None
    parameters: dict[str, dict] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            schema = function.get("parameters") or {}
            parameters[function["name"]] = schema.get("properties") or {} if isinstance(schema, dict) else {}
    return parameters


def typed_value(text: str, schema: dict | None):
    """A parameter's value from its text, as the schema's type says; text stays a string when there is
    no schema, the type is string, or the text is not a valid value of the type."""
    kinds = _schema_types(schema)
    if not kinds or "string" in kinds:
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if any(_is_type(value, kind) for kind in kinds):
        return value
    return text


def _schema_types(schema: dict | None) -> list[str]:
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [k for option in schema[key] for k in _schema_types(option)]
    if "enum" in schema or "const" in schema:
        return ["string"] if all(isinstance(v, str) for v in schema.get("enum", [schema.get("const")])) else ["any"]
    return ["object"] if "properties" in schema else []


def _is_type(value, kind: str) -> bool:
    checks = {
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "any": lambda v: True,
    }
    return checks.get(kind, lambda v: False)(value)


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index
