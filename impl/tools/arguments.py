"""Call arguments and names: reading them from JSON text exactly, and typing XML parameter values by schema.

JSON-bodied formats keep the arguments byte for byte as the model wrote them:

>>> json_members('{"name": "f", "arguments": {"a": 1,  "b": [2]}}')["arguments"]
'{"a": 1,  "b": [2]}'
>>> object_arguments(' {"a": 1} '), object_arguments('[1]'), object_arguments('{"a": NaN}')
('{"a": 1}', None, None)
>>> JsonScan(tag="</x>").run('{"a": "</x>"}</x>')    # a tag outside JSON strings
13

XML-bodied formats write values as text; the tool's JSON schema says what type each one is:

>>> typed_value("3", {"type": "integer"}), typed_value("3", {"type": "string"}), typed_value("3", None)
(3, '3', '3')
"""
from __future__ import annotations

import ast
import json
import math

from .json_prefix import JSON_WHITESPACE


def _reject_constant(name: str):
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


# Strict JSON: Python's decoder would accept NaN and Infinity, which JSON has not.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
# How a template writing values with Jinja's ``string`` filter spells JSON's true, false and null.
_PYTHON_SPELLINGS = {"True": True, "False": False, "None": None}


def json_value(text: str):
    """The one JSON value ``text`` holds (whitespace around it allowed); ValueError if none."""
    try:
        value, end = _DECODER.raw_decode(text, _skip_whitespace(text, 0))
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    if _skip_whitespace(text, end) != len(text):
        raise ValueError(f"text after the JSON value at {end}")
    return value


def json_members(text: str) -> dict[str, str] | None:
    """The raw JSON text of each member of the one object ``text`` holds, or None if it holds no
    object (or more than one thing). A repeated key keeps its last value, as json.loads does."""
    members = _container_entries(text, "{", "}", keyed=True)
    return None if members is None else dict(members)


def json_items(text: str) -> list[str] | None:
    """The raw JSON text of each item of the one array ``text`` holds, or None if it holds no array.

    >>> json_items(' [{"a": 1}, 2 ] ')
    ['{"a": 1}', '2']
    """
    return _container_entries(text, "[", "]", keyed=False)


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
        except (json.JSONDecodeError, RecursionError):
            return None
        entries.append((key, text[index:end]) if keyed else text[index:end])
        index = _skip_whitespace(text, end)
        if text.startswith(",", index):
            index = _skip_whitespace(text, index + 1)
        elif text.startswith(closing, index):
            return entries if _skip_whitespace(text, index + 1) == len(text) else None
        else:
            return None


def object_arguments(raw: str) -> str | None:
    """The arguments text when ``raw`` holds one JSON object (as written, less surrounding
    whitespace); None for anything else."""
    try:
        value = json_value(raw)
    except ValueError:
        return None
    return raw.strip(JSON_WHITESPACE) if isinstance(value, dict) else None


def call_from_json(text: str, argument_keys: tuple[str, ...] = ("arguments",),
                   arguments_required: bool = False, string_arguments: bool = False) -> tuple[str, str] | None:
    """(name, arguments text) of a call written as one JSON object: a non-empty string ``name`` and at
    most one of ``argument_keys``, an object (left out: ``{}``, unless ``arguments_required``; with
    ``string_arguments`` also a JSON string holding an object, whose text is then the arguments); None
    if it is not one.

    >>> call_from_json('{"name": "f", "arguments": {"a": 1}}'), call_from_json('{"name": "f", "arguments": "{}"}')
    (('f', '{"a": 1}'), None)
    """
    members = json_members(text)
    if members is None or "name" not in members:
        return None
    name = json.loads(members["name"])
    given = [key for key in argument_keys if key in members]
    if not isinstance(name, str) or not name or len(given) > 1 or (arguments_required and not given):
        return None
    raw = members[given[0]] if given else "{}"
    if string_arguments and raw.startswith('"'):
        raw = json.loads(raw)
    arguments = object_arguments(raw)
    return None if arguments is None else (name, arguments)


def text_name(raw: str) -> str | None:
    """A call name written as text (not as a JSON string): stripped, non-empty and without ``<``."""
    name = raw.strip()
    return name if name and "<" not in name else None


class JsonScan:
    """Finds the first ``tag`` outside JSON strings in a text that grows between calls to ``run``
    (each text extends the one before), reading each character once.

    >>> scan = JsonScan(tag="</x>")
    >>> scan.run('{"a": "</x>"'), scan.run('{"a": "</x>"}</'), scan.run('{"a": "</x>"}</x>')
    (None, None, 13)
    """

    def __init__(self, tag: str):
        self.tag = tag
        self.position = 0
        self.in_string = self.escaped = False

    def run(self, text: str) -> int | None:
        """The tag's position in ``text``, or None while it has not been found."""
        for index in range(self.position, len(text)):
            char = text[index]
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == self.tag[0] and self.tag.startswith(text[index:index + len(self.tag)]):
                self.position = index
                return index if text.startswith(self.tag, index) else None  # else: may be the tag's start
            elif char == '"':
                self.in_string = True
        self.position = len(text)
        return None


def xml_arguments(name: str, pairs, parameters: dict[str, dict] | None, untyped_json: bool = False) -> str:
    """The JSON arguments of an XML-bodied call from its (key, value text) pairs, each value typed by
    the tool's schema for that key: the members joined in the order written, as a stream passes them
    on (a repeated key stays repeated; as JSON, the last one counts).

    >>> xml_arguments("f", [("a", "1"), ("b", "x")], {"f": {"a": {"type": "integer"}}})
    '{"a": 1, "b": "x"}'
    """
    return "{" + ", ".join(xml_member(name, key, value, parameters, untyped_json) for key, value in pairs) + "}"


def xml_member(name: str, key: str, value: str, parameters: dict[str, dict] | None, untyped_json: bool = False) -> str:
    """One ``"key": value`` member of an XML-bodied call's JSON arguments (``untyped_json``: see typed_value)."""
    schema = ((parameters or {}).get(name) or {}).get(key)
    typed = typed_value(value, schema, untyped_json)
    return f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(typed, ensure_ascii=False)}"


def template_trimmed(value: str) -> str:
    """An XML parameter's value less the layout a template or model puts around it on lines of its
    own: leading whitespace that holds a line break (the break and the indentation after it), and
    trailing whitespace from its first line break on (as llama.cpp and vLLM take them off). A value
    on its parameter's own line keeps its spaces.

    >>> template_trimmed("\\n      John Doe\\n    "), template_trimmed("  x "), template_trimmed("\\nx \\n")
    ('John Doe', '  x ', 'x ')
    """
    start = len(value) - len(value.lstrip())
    if "\n" in value[:start]:
        value = value[start:]
    end = len(value.rstrip())
    line_break = value.find("\n", end)
    return value[:line_break] if line_break >= 0 else value


def tool_parameters(tools) -> dict[str, dict] | None:
    """Each tool's ``properties`` schema by tool name, from an OpenAI ``tools`` list (None: no list)."""
    if tools is None:
        return None
    parameters: dict[str, dict] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            schema = function.get("parameters") or {}
            properties = schema.get("properties") if isinstance(schema, dict) else None
            parameters[function["name"]] = properties if isinstance(properties, dict) else {}
    return parameters


def typed_value(text: str, schema: dict | None, untyped_json: bool = False):
    """A parameter's value from its text: the JSON value (or Python's ``True``/``False``/``None``, as
    templates write them) when the schema allows its type and that type is not string; else the text.
    Type names vLLM's and mlx-lm's parsers read besides JSON Schema's count as theirs (``float``,
    ``double``: number; ``int``: integer; ``bool``: boolean), and for an object or array a Python literal
    counts too where the text is not JSON, as they read it (``{'a': True}``). Where the schema names no type (no tool
    list, a parameter it does not declare, an unknown type name) the text stays text, as vLLM's
    qwen3_coder and minimax_m2 parsers keep it; with ``untyped_json`` (glm45, whose servers both read
    such values as JSON) it is then the JSON value it holds, if any.

    >>> typed_value("False", {"type": "boolean"}), typed_value("3", {"type": ["string", "integer"]})
    (False, 3)
    >>> typed_value("2.5", {"type": "float"}), typed_value('"x"', None), typed_value('"x"', None, untyped_json=True)
    (2.5, '"x"', 'x')
    """
    named = _schema_types(schema)
    if not named and untyped_json:
        try:
            return json_value(text)
        except ValueError:
            return text
    kinds = named - {"string"}
    if not kinds:
        return text
    stripped = text.strip()
    try:
        value = _PYTHON_SPELLINGS[stripped] if stripped in _PYTHON_SPELLINGS else json_value(text)
    except ValueError:
        value = _python_container(stripped) if kinds & {"object", "array"} else None
        if value is None:
            return text
    return value if any(_is_type(value, kind) for kind in kinds) else text


def _python_container(text: str):
    """The dict or list a Python literal of JSON's values writes (``{'a': True}``), or None: vLLM's and
    mlx-lm's qwen3_coder parsers read an object or array parameter so when it is not JSON.

    >>> _python_container("{'a': [1, None]}"), _python_container("(1, 2)"), _python_container("x")
    ({'a': [1, None]}, None, None)
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) and _json_like(value) else None


def _json_like(value) -> bool:
    """Whether a Python value is made only of what JSON has (string keys, finite numbers)."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_like(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_json_like(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


# JSON Schema's type names, and those vLLM's and mlx-lm's XML parsers read besides (their qwen3_coder).
_TYPE_NAMES = {**{kind: kind for kind in ("string", "number", "integer", "boolean", "null", "object", "array")},
               "float": "number", "double": "number", "int": "integer", "bool": "boolean"}


def _schema_types(schema: dict | None) -> set[str]:
    """The JSON types a schema names: its ``type`` (one or a list), and those of its anyOf/oneOf options."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    names = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []
    kinds = {_TYPE_NAMES[name] for name in names if name in _TYPE_NAMES}
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            kinds |= _schema_types(option)
    return kinds


def _is_type(value, kind: str) -> bool:
    """Whether a JSON value is of a schema type (an integral number counts as an integer)."""
    if isinstance(value, bool):
        return kind == "boolean"
    if isinstance(value, (int, float)):
        return kind == "number" or (kind == "integer" and (isinstance(value, int) or value.is_integer()))
    return {"null": value is None, "object": isinstance(value, dict), "array": isinstance(value, list)}.get(kind, False)


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in JSON_WHITESPACE:
        index += 1
    return index
