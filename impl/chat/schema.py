"""A Python function given as a tool becomes the JSON schema transformers' get_json_schema makes of it.

The schema comes from the type hints (int -> integer, list[str] -> array of strings, Optional[X] ->
X with "nullable", Literal and Enum -> "enum", ...) and a Google-style docstring (description, one
line per argument under ``Args:``, an optional ``(choices: [...])`` suffix, ``Returns:``).

    >>> def multiply(x: float, y: float = 2):
    ...     '''Multiplies two numbers.
    ...
    ...     Args:
    ...         x: The first number
    ...         y: The second number
    ...     '''
    >>> function_schema(multiply)["function"]["parameters"]["required"]
    ['x']
"""
from __future__ import annotations

import inspect
import json
import re
import types
import typing
from enum import Enum
from typing import Any, Literal, Union


class TypeHintParsingException(Exception):
    """A type hint that has no JSON schema equivalent (named as transformers names it)."""


class DocstringParsingException(Exception):
    """A docstring missing or not describing every argument (named as transformers names it)."""


# Python types a JSON "enum" can list, by the name of their JSON type.
_JSON_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
_BARE_TYPES = {int: {"type": "integer"}, float: {"type": "number"}, str: {"type": "string"},
               bool: {"type": "boolean"}, type(None): {"type": "null"}, list: {"type": "array"},
               tuple: {"type": "array"}, dict: {"type": "object"}, Any: {}}
# Media types transformers maps when their packages are installed, recognised here by name.
_MEDIA_TYPES = {("PIL.Image", "Image"): {"type": "image"}, ("torch", "Tensor"): {"type": "audio"}}

_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*(Args:|Returns:|Raises:|\Z)", re.DOTALL)
_ARGS_BLOCK = re.compile(r"\n\s*Args:\n(.*?)[\n\s]*(Returns:|Raises:|\Z)", re.DOTALL)
# One "name (type): description" entry; it runs on until a line starting a name no deeper indented.
_ARGUMENT = re.compile(
    r"(?:^|\n)([ \t]*)(\w+)(?:[ \t]*\([^()\n]*\))?:\s*(.*?)\s*"
    r"(?=\n(?!\1[ \t])[ \t]*\w+(?:[ \t]*\([^()\n]*\))?:|\Z)", re.DOTALL)
_RETURNS_BLOCK = re.compile(r"\n\s*Returns:\n\s*(.*?)[\n\s]*(Raises:|\Z)", re.DOTALL)
_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE)


def _enum_schema(values: list) -> dict:
    names = list(dict.fromkeys(_JSON_SCALARS[type(value)] for value in values))
    return {"type": names[0] if len(names) == 1 else names, "enum": values}


def _bare_type_schema(hint) -> dict | None:
    if hint in _BARE_TYPES:
        return dict(_BARE_TYPES[hint])
    media = _MEDIA_TYPES.get((getattr(hint, "__module__", None), getattr(hint, "__name__", None)))
    return dict(media) if media is not None else None


def hint_schema(hint) -> dict:
    """The JSON schema of one type hint.

    >>> hint_schema(typing.Optional[list[int]])
    {'type': 'array', 'items': {'type': 'integer'}, 'nullable': True}
    """
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None and isinstance(hint, type) and issubclass(hint, Enum):
        values = [member.value for member in hint]
        if not values:
            raise TypeHintParsingException(f"The Enum {hint.__name__} has no members, so no value could ever match it.")
        if any(type(value) not in _JSON_SCALARS for value in values):
            raise TypeHintParsingException(
                f"The Enum {hint.__name__} has member values that cannot be written as JSON scalars.\n"
                f"Values: {values}\nEnum member values must be int, float, str, bool or None to be converted "
                "to a JSON schema.")
        return _enum_schema(values)
    if origin is None:
        schema = _bare_type_schema(hint)
        if schema is None:
            raise TypeHintParsingException(
                f"Couldn't convert the type hint {hint!r} to a JSON schema, likely because it is a custom class "
                "or object. Supported type hints are basic types like int, float, str and bool, Enum classes, "
                "typing.Literal, and list, tuple, dict and Union types containing those.")
        return schema
    if origin is Union or origin is types.UnionType:
        members = [hint_schema(arg) for arg in args if arg is not type(None)]
        if len(members) == 1:
            schema = members[0]
        elif all(m.keys() == {"type"} and isinstance(m["type"], str) for m in members):
            names = sorted({m["type"] for m in members})
            schema = {"type": names[0] if len(names) == 1 else names}
        else:  # members with items, enum or prefixItems would lose them in a list of type names
            schema = {"anyOf": members}
        if type(None) in args:
            schema["nullable"] = True
        return schema
    if origin is Literal and args:
        if any(type(arg) not in _JSON_SCALARS for arg in args):
            raise TypeHintParsingException("Only the valid python literals can be listed in typing.Literal.")
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": hint_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        return _tuple_schema(hint, args)
    if origin is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = hint_schema(args[1])
        return schema
    raise TypeHintParsingException("Couldn't parse this type hint, likely due to a custom class or object: ", hint)


def _tuple_schema(hint, args: tuple) -> dict:
    if not args:
        return {"type": "array"}
    if len(args) == 1:
        raise TypeHintParsingException(
            f"The type hint {str(hint).replace('typing.', '')} is a Tuple with a single element, which we do not "
            "automatically convert to JSON schema. Use list[] for several elements, or the element type alone.")
    if ... in args:
        raise TypeHintParsingException("Conversion of '...' is not supported in Tuple type hints. "
                                       "Use list[] types for variable-length inputs instead.")
    return {"type": "array", "prefixItems": [hint_schema(arg) for arg in args]}


def _parameters_schema(func) -> dict:
    hints = typing.get_type_hints(func)
    signature = inspect.signature(func)
    name = getattr(func, "__name__", "operation")
    # A first parameter named self or cls without a hint is a method's receiver, not a tool argument.
    first = next(iter(signature.parameters), None)
    receiver = first if first in {"self", "cls"} and \
        signature.parameters[first].annotation == inspect.Parameter.empty else None
    required = []
    for parameter_name, parameter in signature.parameters.items():
        if parameter_name == receiver:
            continue
        if parameter.annotation == inspect.Parameter.empty:
            raise TypeHintParsingException(f"Argument {parameter.name} is missing a type hint in function {name}")
        if parameter.default == inspect.Parameter.empty:
            required.append(parameter_name)
    properties = {}
    for parameter_name, hint in hints.items():
        if parameter_name == receiver:
            continue
        if parameter_name == "return":
            # The model never writes the return value: a hint without a schema just stays out.
            try:
                properties["return"] = hint_schema(hint)
            except TypeHintParsingException:
                pass
        else:
            properties[parameter_name] = hint_schema(hint)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _parse_docstring(doc: str) -> tuple[str | None, dict[str, str], str | None]:
    description = _DESCRIPTION.search(doc)
    arguments = _ARGS_BLOCK.search(doc)
    returns = _RETURNS_BLOCK.search(doc)
    descriptions = {}
    if arguments is not None:
        block = "\n".join(line for line in arguments.group(1).split("\n") if line.strip())
        descriptions = {m[1]: re.sub(r"\s*\n+\s*", " ", m[2].strip()) for m in _ARGUMENT.findall(block)}
    return (description.group(1).strip() if description else None, descriptions,
            returns.group(1).strip() if returns else None)


def function_schema(func) -> dict:
    """``{"type": "function", "function": {name, description, parameters[, return]}}`` for ``func``."""
    doc = inspect.getdoc(func)
    name = getattr(func, "__name__", "operation")
    if not doc:
        raise DocstringParsingException(f"Cannot generate JSON schema for {name} because it has no docstring!")
    description, argument_descriptions, return_description = _parse_docstring(doc.strip())
    parameters = _parameters_schema(func)
    returns = parameters["properties"].pop("return", None)
    if returns is not None and return_description is not None:
        returns["description"] = return_description
    for argument, schema in parameters["properties"].items():
        if argument not in argument_descriptions:
            raise DocstringParsingException(f"Cannot generate JSON schema for {name} because the docstring has "
                                            f"no description for the argument '{argument}'")
        text = argument_descriptions[argument]
        choices = _CHOICES.search(text)
        if choices:
            schema["enum"] = [c.strip() if isinstance(c, str) else c for c in json.loads(choices.group(1))]
            text = text[:choices.start()].strip()
        schema["description"] = text
    function = {"name": name, "description": description, "parameters": parameters}
    if returns is not None:
        function["return"] = returns
    return {"type": "function", "function": function}
