"""The registry of Python reproducer scripts, one maker per (component, property), and the one
skeleton every script is written in.

A leaf module: the makers register here (``@scripted``) and nothing here imports them (the package's
``__init__`` imports each maker module by name). A maker computes the reference's answer *now*, by
the oracle, and returns a ``Script``: the data inline, ``EXPECTED``, and the lines that ask the
``--impl`` module the same thing through its public API. The written file imports only that module
(and the standard library), prints both answers and exits 1 while they differ:

    $ python 01-stops-stream-output-ends-before-the-reference-s.py
    expected: {'output': 'b', 'stopped': False, 'stop_string': None}
    actual:   {'output': '', 'stopped': False, 'stop_string': None}
    $ echo $?
    1
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ...naming.divergence import Case

# How a script that needs a tokenizer loads the minimized file (and the family's tokenizer_config.json,
# where it holds one): through the module's own Tokenizer.
LOAD_TOKENIZER = '''with tempfile.TemporaryDirectory() as folder:
    Path(folder, "tokenizer.json").write_text(TOKENIZER_JSON, encoding="utf-8")
{config}    tokenizer = engine.Tokenizer.from_dir(folder)
'''
WRITE_CONFIG = '''    Path(folder, "tokenizer_config.json").write_text(TOKENIZER_CONFIG_JSON, encoding="utf-8")
'''

SKELETON = '''#!/usr/bin/env python3
"""{title}

The engine, {module}, against the reference, {oracle}{on}.
From {origin}.
EXPECTED is the reference's answer, {reference}, computed when this file was written.
Needs only the engine; prints both answers and exits 1 while they differ.
"""
{imports}

import {module} as engine

{constants}
EXPECTED = {expected}
problems = []  # the rules the engine broke on the way, as lines to print

{helpers}try:
{load}{body}except Exception as exc:  # noqa: BLE001 - an engine that raises: that is its answer
    actual = None
    problems.append(f"raised {{type(exc).__name__}}: {{exc}}")
print("expected:", ascii(EXPECTED))
print("actual:  ", ascii(actual))
for problem in problems:
    print("problem: ", problem)
sys.exit(1 if {fails} else 0)
'''


@dataclass
class ScriptPlan:
    """What one script is made from: a record's minimized case on an ``--impl`` module."""

    case: Case
    signature: str
    impl: str  # the module's name, as --impl gave it
    origin: str  # where the data comes from: "textbound's run reports/x, family gpt2"
    oracle: str  # the oracle's version, as the record has it
    spec: dict | None = None  # the minimized tokenizer.json, for the makers that need a tokenizer
    config: dict | None = None  # the tokenizer_config.json beside it, for the makers that need one


@dataclass
class Script:
    """A maker's answer: ``constants`` (name -> value, written as Python literals, in order), the
    reference's ``expected`` answer and what computed it, and ``body``, the lines that set
    ``actual`` (and append to ``problems`` the rules broken on the way, as lines to print)."""

    constants: dict
    expected: object
    reference: str  # what gave EXPECTED: "tokenizers' decode(IDS)"
    body: str
    imports: tuple[str, ...] = ()
    fails: str = "actual != EXPECTED or problems"  # the script's verdict, a Python expression
    helpers: list[str] = field(default_factory=list)  # functions' source, written before the body


class Unscripted(Exception):
    """Why a case gets no script (the reference cannot answer it, the script could not be fair)."""


@dataclass(frozen=True)
class Scripted:
    tokenizer: bool  # whether the script loads the minimized tokenizer.json with the module's Tokenizer
    make: Callable[[ScriptPlan], Script]


SCRIPTED: dict[tuple[str, str], Scripted] = {}


def scripted(component: str, prop: str, tokenizer: bool = False):
    """Registers the maker of ``component``/``prop``'s scripts: ``SCRIPTED["stops", "stream"] = ...``."""
    def register(make: Callable[[ScriptPlan], Script]) -> Callable[[ScriptPlan], Script]:
        SCRIPTED[(component, prop)] = Scripted(tokenizer, make)
        return make
    return register


def literal(value) -> str:
    """A JSON-like value as Python source, ASCII only: ``literal({"a": "é", "b": None}) ==
    "{'a': '\\\\xe9', 'b': None}"``."""
    return ascii(value)


def in_docstring(text: str) -> str:
    """``text`` as the source of a docstring that reads back as ``text``: a signature may hold a
    backslash (``writes \\u escapes``) or quotes, which the script's docstring must not read as
    escapes or as its end."""
    return text.replace("\\", "\\\\").replace('"""', '\\"""')


def script_text(plan: ScriptPlan) -> str:
    """The file of ``plan``'s case (raises Unscripted where it gets none): for a stops/stream case,
    ``DELTAS = ['b']``, ``STOPS = ['bye!!']``, ``EXPECTED = {'output': 'b', ...}``, the StopChecker fed
    the deltas, then the verdict (see the module's example)."""
    maker = SCRIPTED[(plan.case.component, plan.case.property)]
    script = maker.make(plan)
    constants = dict(script.constants)
    imports = ["import sys", *script.imports]
    load = ""
    if maker.tokenizer:
        files = {"TOKENIZER_JSON": json.dumps(plan.spec)}
        if plan.config is not None:
            files["TOKENIZER_CONFIG_JSON"] = json.dumps(plan.config, ensure_ascii=False)
        constants = {**files, **constants}
        imports += ["import tempfile", "from pathlib import Path"]
        load = LOAD_TOKENIZER.format(config=WRITE_CONFIG if plan.config is not None else "")
    return SKELETON.format(
        title=in_docstring(plan.signature), module=plan.impl,
        oracle=in_docstring(plan.oracle or "(version not recorded)"),
        on=" on a minimized tokenizer.json" if maker.tokenizer else "", origin=in_docstring(plan.origin),
        reference=in_docstring(script.reference), imports="\n".join(sorted(set(imports), key=_import_order)),
        constants="\n".join(f"{name} = {literal(value)}" for name, value in constants.items()),
        expected=literal(script.expected), helpers="".join(f"{source.rstrip()}\n\n\n" for source in script.helpers),
        load=_indented(load), body=_indented(script.body), fails=script.fails)


def _import_order(line: str) -> tuple[bool, str]:
    """``import`` lines first, then ``from`` ones, each sorted."""
    return line.startswith("from"), line


def _indented(source: str) -> str:
    """Lines of the script's ``try:`` block: ``_indented("a = 1\\n") == "    a = 1\\n"``."""
    return "".join(f"    {line}" if line.strip() else line for line in source.splitlines(keepends=True))

