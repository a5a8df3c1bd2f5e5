"""What every whole-text tool-call reference shares: the parsed message as spans of the text, strict
JSON, JSON-string-aware tag search, schema typing of text arguments, and the engine of the formats
whose calls sit between tags.

The reference sees the whole text at once and says, for every character, what it became:

- ``content`` and ``reasoning``: text of the message's content or reasoning, verbatim;
- ``markup``: tags, and call blocks that became calls (with the section tags and the whitespace that
  glues them to their calls);
- ``fallback``: malformed markup (invalid JSON, a missing name, nested tags, a section tag away from
  any call) kept as content, never dropped.

The rules every format shares are listed in oracles.tool_reference's docstring.
"""
from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import regex

CONTENT, REASONING, MARKUP, FALLBACK = "content", "reasoning", "markup", "fallback"
MESSAGE_KINDS = {CONTENT: "content", FALLBACK: "content", REASONING: "reasoning"}


@dataclass(frozen=True)
class Call:
    name: str
    arguments: object  # a JSON value, an object for every well-formed call


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


def runs_of_content(spans: list[Span]) -> Iterator[tuple[int, int, bool]]:
    """The spans in order as ``(first, last, is_content)``: a span outside content alone, a run of
    consecutive content (and fallback) spans whole. Kinds markup, content, fallback, markup give
    ``(0, 0, False), (1, 2, True), (3, 3, False)``."""
    index = 0
    while index < len(spans):
        content = MESSAGE_KINDS.get(spans[index].kind) == "content"
        last = index
        while content and last + 1 < len(spans) and MESSAGE_KINDS.get(spans[last + 1].kind) == "content":
            last += 1
        yield index, last, content
        index = last + 1


@dataclass
class Parsed:
    """The whole text cut into spans, and the calls its markup made."""

    text: str
    spans: list[Span] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    call_markup: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each call's markup

    def _joined(self, field_name: str) -> str:
        return "".join(self.text[s.start:s.end] for s in self.spans if MESSAGE_KINDS.get(s.kind) == field_name)

    @property
    def content(self) -> str:
        return self._joined("content")

    @property
    def reasoning(self) -> str:
        return self._joined("reasoning")

    def message(self) -> dict:
        """The message as plain JSON data: ``{"content", "reasoning_content", "calls": [{"name", "arguments"}]}``."""
        return {"content": self.content, "reasoning_content": self.reasoning,
                "calls": [{"name": call.name, "arguments": call.arguments} for call in self.calls]}

    def add(self, start: int, end: int, kind: str) -> int:
        """Marks ``text[start:end]`` as ``kind`` (merging with a span of the same kind before it); returns ``end``."""
        if end > start:
            if self.spans and self.spans[-1].kind == kind and self.spans[-1].end == start:
                start = self.spans.pop().start
            self.spans.append(Span(start, end, kind))
        return end

    def add_call_markup(self, start: int, end: int) -> int:
        """Marks ``text[start:end]`` as the markup of calls; returns ``end``."""
        self.call_markup.append((start, end))
        return self.add(start, end, MARKUP)

    def drop_blank_runs_beside_calls(self) -> "Parsed":
        """Content that is whitespace alone between two non-content spans (or the text's ends), one of
        them a call's markup, becomes markup: vLLM's parsers keep only the text before the first call
        and after the last, and llama.cpp's tests expect no content from the line breaks around calls.
        A run of whitespace alone right before fallback text becomes fallback (its fate waits for the
        block's, so a stream may hold it as long)."""
        call_starts = {start for start, _ in self.call_markup}
        call_ends = {end for _, end in self.call_markup}
        spans, self.spans = self.spans, []
        for index, last, content in runs_of_content(spans):
            if not content:
                self.add(spans[index].start, spans[index].end, spans[index].kind)
                continue
            run = spans[index:last + 1]
            start, end = run[0].start, run[-1].end
            if not self.text[start:end].strip(JSON_WHITESPACE) and (start in call_ends or end in call_starts):
                self.add(start, end, MARKUP)
            else:
                for number, span in enumerate(run):
                    blank_before_fallback = (number == 0 and span.kind == CONTENT and len(run) > 1 and run[1].kind == FALLBACK
                                             and not self.text[span.start:span.end].strip(JSON_WHITESPACE))
                    self.add(span.start, span.end, FALLBACK if blank_before_fallback else span.kind)
        return self

    def trim_edges(self, edge: str) -> "Parsed":
        """The characters of ``edge`` at an end of a content run (content and fallback between two other
        spans) that touches markup or reasoning become markup: both of glm45's servers trim its content
        around calls and reasoning (vLLM's glm4_moe parser strips it; llama.cpp's tests/test-chat.cpp,
        GLM-4.6)."""
        spans, self.spans = self.spans, []
        for index, last, content in runs_of_content(spans):
            if not content:
                self.add(spans[index].start, spans[index].end, spans[index].kind)
                continue
            start, end = spans[index].start, spans[last].end
            run = self.text[start:end]
            kept_start = start + (len(run) - len(run.lstrip(edge)) if index > 0 else 0)
            kept_end = end - (len(run) - len(run.rstrip(edge)) if last + 1 < len(spans) else 0)
            kept_end = max(kept_start, kept_end)
            self.add(start, kept_start, MARKUP)
            run_spans = spans[index:last + 1]
            for number, span in enumerate(run_spans):
                span_start, span_end = max(span.start, kept_start), min(span.end, kept_end)
                # Edge characters right before fallback text wait for its block's fate, as a stream holds them.
                waiting = span_end
                if span.kind == CONTENT and number + 1 < len(run_spans) and run_spans[number + 1].kind == FALLBACK:
                    waiting = max(span_start, span_start + len(self.text[span_start:span_end].rstrip(edge)))
                self.add(span_start, waiting, span.kind)
                self.add(waiting, span_end, FALLBACK)
            self.add(kept_end, end, MARKUP)
        return self

    def released_before(self, position: int, kind: str) -> str:
        """The text of ``kind`` (content or reasoning) from spans before ``position`` and before any
        fallback span: what a stream must have released once it has seen ``text[:position]`` and no
        tag can start in what it holds (fallback waits for its block's end, and everything behind it too)."""
        released = []
        for span in self.spans:
            if span.kind == FALLBACK or span.start >= position:
                break
            if MESSAGE_KINDS.get(span.kind) == kind:
                released.append(self.text[span.start:min(span.end, position)])
        return "".join(released)


class NotJson(ValueError):
    pass


def _reject_constant(name: str):
    raise NotJson(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
JSON_WHITESPACE = " \t\n\r"


def strict_json(text: str) -> object:
    """The JSON value ``text`` holds (surrounding JSON whitespace allowed); NotJson otherwise.

    >>> strict_json(' {"a": [1, 2.5]} ')
    {'a': [1, 2.5]}
    """
    value, end = json_prefix(text, 0)
    if text[end:].strip(JSON_WHITESPACE):
        raise NotJson(f"text after the JSON value at {end}")
    return value


def json_prefix(text: str, start: int) -> tuple[object, int]:
    """The JSON value starting at ``start`` (after JSON whitespace) and where it ends; NotJson if none."""
    while start < len(text) and text[start] in JSON_WHITESPACE:
        start += 1
    try:
        return _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise NotJson(str(exc)) from None


def find_outside_json_strings(text: str, tag: str, start: int) -> int:
    """Where ``tag`` first occurs at or after ``start`` outside a JSON string; -1 if nowhere.

    A ``"`` opens or closes a string, a backslash inside a string escapes the next character:

    >>> find_outside_json_strings('{"a": "</x>"}</x>', "</x>", 0)
    13
    """
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith(tag, index):
            return index
    return -1


def call_from_object(value: object, arguments_keys: tuple[str, ...] = ("arguments",),
                     arguments_required: bool = False, string_arguments: bool = False) -> Call | None:
    """``{"name": "f", "arguments": {...}}`` as a Call (arguments left out: ``{}``, unless
    ``arguments_required``; with ``string_arguments``, a JSON string that holds an object stands for
    it); None when the name is not a non-empty string, the arguments are not an object, or two
    arguments keys are given."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    present = [key for key in arguments_keys if key in value]
    if len(present) > 1 or (arguments_required and not present):
        return None
    arguments = value[present[0]] if present else {}
    if string_arguments and isinstance(arguments, str):
        try:
            arguments = strict_json(arguments)
        except NotJson:
            return None
    return Call(value["name"], arguments) if isinstance(arguments, dict) else None


def json_object_call(name: str, body: str) -> list[Call] | None:
    """A call named ``name`` (stripped; no ``<`` in it) whose body is its arguments as a JSON object."""
    name = name.strip()
    if not name or "<" in name:
        return None
    try:
        arguments = strict_json(body)
    except NotJson:
        return None
    return [Call(name, arguments)] if isinstance(arguments, dict) else None


# Schema typing of arguments written as text (the XML formats).
# JSON Schema's type names, and those vLLM's and mlx-lm's XML parsers read besides (their qwen3_coder:
# "float"/"double" numbers, "int" integers, "bool" booleans).
TYPE_NAMES = {"string": "string", "number": "number", "integer": "integer", "boolean": "boolean", "null": "null",
              "object": "object", "array": "array", "float": "number", "double": "number", "int": "integer",
              "bool": "boolean"}


def _schema_types(schema: object) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    types = {TYPE_NAMES[name] for name in names if isinstance(name, str) and name in TYPE_NAMES}
    for union in ("anyOf", "oneOf"):
        for member in schema.get(union) or []:
            types |= _schema_types(member)
    return types


def _json_types(value: object) -> set[str]:
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number", "integer"} if value.is_integer() else {"number"}
    return {str: {"string"}, type(None): {"null"}, list: {"array"}, dict: {"object"}}[type(value)]


def parameter_schemas(tools: list | None, name: str) -> dict | None:
    """The ``properties`` of the tool called ``name`` in the request's tool list; None for an unknown tool."""
    for tool in tools or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            parameters = function.get("parameters")
            properties = parameters.get("properties") if isinstance(parameters, dict) else None
            return properties if isinstance(properties, dict) else {}
    return None


# How a template writing values with Jinja's ``string`` filter spells JSON's true, false and null.
PYTHON_SPELLINGS = {"True": True, "False": False, "None": None}


def typed_value(raw: str, schema: object, untyped_json: bool = False) -> object:
    """An argument written as text, typed by its parameter's schema: the JSON value when the text is
    JSON of a type the schema allows other than string, else the text itself. Where the schema names
    no type (none, or unknown names) the text, as vLLM's qwen3_coder and minimax_m2 parsers keep it, or
    with ``untyped_json`` (glm45: vLLM's glm4_moe parser and llama.cpp both read it so) any JSON value
    the text holds.

    >>> typed_value("7", {"type": "integer"}), typed_value("7", {"type": "string"}), typed_value("7", None)
    (7, '7', '7')
    >>> typed_value("7", None, untyped_json=True), typed_value("7.5", {"type": "float"})
    (7, 7.5)

    Templates write non-string values with Jinja's ``string`` filter, so Python's spellings count too
    (and for an object or array, a Python literal: python_literal):

    >>> typed_value("False", {"type": "boolean"})
    False
    """
    named = _schema_types(schema)
    if untyped_json and not named:
        try:
            return strict_json(raw)
        except NotJson:
            return raw
    allowed = named - {"string"}
    if not allowed:
        return raw
    try:
        value = PYTHON_SPELLINGS[raw.strip()] if raw.strip() in PYTHON_SPELLINGS else strict_json(raw)
    except NotJson:
        value = python_literal(raw.strip()) if allowed & {"object", "array"} else None
        if not isinstance(value, (dict, list)):
            return raw
    return value if _json_types(value) & allowed and not isinstance(value, str) else raw


def python_literal(text: str) -> object:
    """The value a Python literal writes when it is one JSON could write (dicts with string keys, lists,
    strings, finite numbers, True/False/None), else None: vLLM's and mlx-lm's qwen3_coder parsers read
    an object or array parameter that is not JSON as a Python literal (``ast.literal_eval``).

    >>> python_literal("{'in_stock': True, 'tags': ['a']}"), python_literal("{1: 2}"), python_literal("{1, 2}")
    ({'in_stock': True, 'tags': ['a']}, None, None)
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        return value if json.loads(json.dumps(value, allow_nan=False)) == value and _all_keys_strings(value) else None
    except (TypeError, ValueError):
        return None


def _all_keys_strings(value: object) -> bool:
    if isinstance(value, dict):
        return all(isinstance(key, str) and _all_keys_strings(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return isinstance(value, list) and all(_all_keys_strings(item) for item in value)
    return True


@dataclass(frozen=True)
class CallTag:
    """One more way a format's call block opens: ``open``, its body up to the first ``close`` (outside
    JSON strings when ``close_outside_strings``, else the first anywhere) or the end of the text, turned
    into calls by ``body`` (None: malformed, kept as content). ``close`` "": ``open`` begins a JSON
    value, and the block ends where that value ends (the text's end if it never is valid JSON)."""

    open: str
    close: str
    body: Callable[[str, list | None], list[Call] | None]
    close_outside_strings: bool = False
    header: regex.Pattern | None = None  # what must follow ``open`` for it to open a block (else it is text)

    def block_end(self, text: str, body_start: int) -> tuple[int, int]:
        if not self.close:
            try:
                _, end = json_prefix(text, body_start - len(self.open))
            except NotJson:
                return len(text), len(text)
            return end, end
        find = find_outside_json_strings if self.close_outside_strings else str.find
        close = find(text, self.close, body_start)
        return (len(text), len(text)) if close < 0 else (close, close + len(self.close))


@dataclass(frozen=True)
class TagFormat:
    """A format whose calls are blocks opened by ``call_open``: the block's body runs to the first
    ``call_close`` (outside JSON strings when ``close_outside_strings``) or, where the format says so,
    to where ``block_end`` finds it ends; without either, to the end of the text. ``body`` turns the
    body into calls (None: malformed, kept as content). ``variants``: other tags that open call blocks."""

    name: str
    think: tuple[str, str] | None
    call_open: str
    call_close: str | None
    body: Callable[[str, list | None], list[Call] | None]
    close_outside_strings: bool = False
    sections: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # (opening, closing) tags around calls
    block_end: Callable[[str, int], tuple[int, int]] | None = None  # (body end, block end) for close-less formats
    variants: tuple[CallTag, ...] = ()
    reasoning_ends_at_section: bool = False  # a reasoning block never closed ends at a section opening tag

    def tags(self, reasoning: bool = True) -> tuple[str, ...]:
        found = [self.call_open, *([self.call_close] if self.call_close else []), *self.sections[0], *self.sections[1]]
        found += [tag for variant in self.variants for tag in (variant.open, variant.close) if tag]
        return tuple(dict.fromkeys(found + list(self.think if reasoning and self.think else ())))

    def find_block_end(self, text: str, body_start: int) -> tuple[int, int]:
        if self.block_end is not None:
            return self.block_end(text, body_start)
        find = find_outside_json_strings if self.close_outside_strings else str.find
        close = find(text, self.call_close, body_start)
        return (len(text), len(text)) if close < 0 else (close, close + len(self.call_close))


def parse_tagged(fmt: TagFormat, text: str, tools: list | None = None, reasoning: bool = True,
                 starts_in_reasoning: bool = False, repeated_open_is_syntax: bool = True) -> Parsed:
    """The whole text, left to right: content until the earliest tag; a reasoning block to its close
    tag (or the end); a call block to its end, as calls or, when malformed, as fallback content; a
    section opening tag is markup only when (after whitespace) a call opens, a section closing tag
    only when (after whitespace) it follows a call."""
    parsed = Parsed(text)
    think = fmt.think if reasoning else None

    def reasoning_block(start: int) -> int:
        close = text.find(think[1], start)
        sections = [at for tag in fmt.sections[0] if (at := text.find(tag, start)) >= 0]
        if close < 0 and fmt.reasoning_ends_at_section and sections:
            return parsed.add(start, min(sections), REASONING)
        if close < 0:
            return parsed.add(start, len(text), REASONING)
        parsed.add(start, close, REASONING)
        return parsed.add(close, close + len(think[1]), MARKUP)

    position = 0
    if think and starts_in_reasoning:
        # An opening tag the output begins with (after whitespace) when the prompt opened reasoning is
        # syntax: vLLM's reasoning parsers drop it (tests/reasoning/test_deepseekr1_reasoning_parser.py).
        written = _skip_whitespace(text, 0)
        if repeated_open_is_syntax and text.startswith(think[0], written):
            parsed.add(0, written + len(think[0]), MARKUP)
            position = written + len(think[0])
        position = reasoning_block(position)
    openers = [(fmt.call_open, "call"), *((tag, "section") for tag in fmt.sections[0]),
               *([(think[0], "think")] if think else []), *((variant.open, variant) for variant in fmt.variants)]
    block_start = None  # where a section opening tag right before the next call began
    while position < len(text):
        found = [(at, -len(tag), tag, kind) for tag, kind in openers if (at := text.find(tag, position)) >= 0]
        if not found:
            parsed.add(position, len(text), CONTENT)
            break
        at, _, tag, kind = min(found)
        parsed.add(position, at, CONTENT)
        after = at + len(tag)
        if kind == "think":
            position = reasoning_block(parsed.add(at, after, MARKUP))
        elif kind == "section":
            next_call = _skip_whitespace(text, after)
            if text.startswith(fmt.call_open, next_call):
                block_start, position = at, next_call
            else:  # a section tag away from any call is kept as content
                position = parsed.add(at, after, FALLBACK)
        elif isinstance(kind, CallTag):
            if kind.header is not None and not kind.header.match(text, after):
                position = parsed.add(at, after, FALLBACK)  # not a call tag after all: the text goes on
                continue
            body_end, end = kind.block_end(text, after)
            calls = kind.body(text[after:body_end], tools)
            position = parsed.add(at, end, FALLBACK) if calls is None else parsed.add_call_markup(at, end)
            parsed.calls += calls or []
        else:
            body_end, end = fmt.find_block_end(text, after)
            calls = fmt.body(text[after:body_end], tools)
            start = at if block_start is None else block_start
            block_start = None
            if calls is None:
                position = parsed.add(start, end, FALLBACK)
                continue
            parsed.calls += calls
            close = _skip_whitespace(text, end)
            section_close = next((tag for tag in fmt.sections[1] if text.startswith(tag, close)), None)
            position = parsed.add_call_markup(start, close + len(section_close) if section_close else end)
    return parsed


def _skip_whitespace(text: str, position: int) -> int:
    """Past the JSON whitespace (space, tab, line feed, carriage return) at ``position``."""
    return len(text) - len(text[position:].lstrip(JSON_WHITESPACE))
