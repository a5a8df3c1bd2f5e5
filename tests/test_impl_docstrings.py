"""Every public name of impl has a worked example in its docstring, and the examples run."""
from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import impl

# The public names that are plain values (a template's text, a tuple of names): no docstring of their own.
VALUES = {"CHATML_TEMPLATE", "FORMATS"}
MODULES = ["impl.errors", "impl.streaming.stops", "impl.streaming.detokenizer", "impl.chat.render",
           "impl.tokenizer.tokenizer", "impl.tools.message", "impl.tools", "impl.structured.schema",
           "impl.structured.tool_call", "impl.structured.constraint", "impl.structured.regex_text"]


@pytest.mark.parametrize("name", sorted(set(impl.__all__) - VALUES))
def test_each_public_name_has_a_worked_example(name):
    assert ">>>" in (inspect.getdoc(getattr(impl, name)) or ""), f"impl.{name} has no example"


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_give_what_they_say(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
