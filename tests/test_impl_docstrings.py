"""Every public name of impl has a worked example in its docstring, and the examples run."""
from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

from textbound import impl

# The public names that are plain values (a template's text, a tuple of names): no docstring of their own.
VALUES = {"CHATML_TEMPLATE", "FORMATS"}
MODULES = ["textbound.impl.errors", "textbound.impl.streaming.stops", "textbound.impl.streaming.detokenizer", "textbound.impl.chat.render",
           "textbound.impl.tokenizer.tokenizer", "textbound.impl.tools.message", "textbound.impl.tools", "textbound.impl.structured.schema",
           "textbound.impl.structured.tool_call", "textbound.impl.structured.constraint", "textbound.impl.structured.regex_text"]


@pytest.mark.parametrize("name", sorted(set(impl.__all__) - VALUES))
def test_each_public_name_has_a_worked_example(name):
    assert ">>>" in (inspect.getdoc(getattr(impl, name)) or ""), f"impl.{name} has no example"


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_give_what_they_say(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
