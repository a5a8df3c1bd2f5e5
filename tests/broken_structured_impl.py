"""Deliberately broken variants of the structured component, one bug each, for the tests that every
structured check fires: ``variant("minimum_ignored")`` is a module exposing impl's public names
with that one bug, registered in sys.modules so ``Implementation(variant_name(...))`` imports it.

- optional_required: every property of the root object is treated as required.
- minimum_ignored: ``minimum`` is dropped from every schema before it becomes a pattern.
- extra_byte: Constraint.allowed_tokens also allows one token the pattern never admits.
- colon_space_rejected: the pattern refuses text with a space after ``":``.
- unknown_name_accepted: tool_call_pattern ignores a ``name`` that no tool has.
- vocabulary_refused: Constraint refuses every vocabulary as one it cannot follow.
- advance_refused: Constraint.advance refuses every token, even the ones it allows (as an engine whose
  mask and step disagree).

The base is the module named by $TEXTBOUND_IMPL (default ``impl``), as in tests/families.py.
"""
from __future__ import annotations

import copy
import importlib
import os
import sys
from types import ModuleType

BASE = os.environ.get("TEXTBOUND_IMPL", "textbound.impl")
VARIANTS = ("optional_required", "minimum_ignored", "extra_byte", "colon_space_rejected", "unknown_name_accepted",
            "vocabulary_refused", "advance_refused")
# Never in a JSON text outside a string, and never inside one unescaped: a control character.
EXTRA_BYTE = b"\x01"


def _without(schema, keyword: str):
    if isinstance(schema, dict):
        return {key: _without(value, keyword) for key, value in schema.items() if key != keyword}
    if isinstance(schema, list):
        return [_without(item, keyword) for item in schema]
    return schema


def _all_required(schema: dict) -> dict:
    schema = copy.deepcopy(schema)
    if isinstance(schema.get("properties"), dict):
        schema["required"] = list(schema["properties"])
    return schema


def _extra_byte_constraint(base: ModuleType):
    class Constraint(base.Constraint):
        """Allows one more token than the pattern does: the one spelling EXTRA_BYTE."""

        def __init__(self, pattern, tokenizer):
            spelled = [i for i, data in enumerate(tokenizer.vocab_bytes()) if data == EXTRA_BYTE]
            if not spelled:
                raise ValueError("the vocabulary has no token for the extra byte")
            self.extra_id = spelled[0]  # before the base class asks for allowed tokens
            super().__init__(pattern, tokenizer)

        def allowed_tokens(self, state):
            return {*super().allowed_tokens(state), self.extra_id}
    return Constraint


def variant_name(name: str) -> str:
    return f"{__name__}_{name}"


def variant(name: str) -> ModuleType:
    """The module for one broken variant (built once, then found in sys.modules)."""
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    module_name = variant_name(name)
    if module_name in sys.modules:
        return sys.modules[module_name]
    base = importlib.import_module(BASE)
    module = ModuleType(module_name, f"{BASE} with the structured bug {name!r}")
    module.__dict__.update({key: getattr(base, key) for key in dir(base) if not key.startswith("__")})
    module.__version__ = f"{getattr(base, '__version__', '?')}+{name}"
    to_regex = base.json_schema_to_regex
    if name in ("optional_required", "minimum_ignored"):
        change = _all_required if name == "optional_required" else lambda schema: _without(schema, "minimum")
        module.json_schema_to_regex = lambda schema, **kw: to_regex(change(schema), **kw)
        module.tool_call_pattern = lambda tools, **kw: base.tool_call_pattern(
            [{**tool, "function": {**tool["function"], "parameters": change(tool["function"]["parameters"])}}
             for tool in tools], **kw)
    elif name == "colon_space_rejected":
        module.json_schema_to_regex = lambda schema, **kw: '(?!.*": )' + to_regex(schema, **kw)
    elif name == "unknown_name_accepted":
        def tool_call_pattern(tools, *, name=None, format="hermes"):
            known = {tool["function"]["name"] for tool in tools}
            return base.tool_call_pattern(tools, name=name if name in known else None, format=format)
        module.tool_call_pattern = tool_call_pattern
    elif name == "vocabulary_refused":
        def refusing_constraint(pattern, tokenizer):
            raise ValueError("this vocabulary is not supported")
        module.Constraint = refusing_constraint
    elif name == "advance_refused":
        class RefusingConstraint(base.Constraint):
            def advance(self, state, token_id):
                raise ValueError(f"token {token_id} is not allowed here")
        module.Constraint = RefusingConstraint
    else:
        module.Constraint = _extra_byte_constraint(base)
    sys.modules[module_name] = module
    return module
