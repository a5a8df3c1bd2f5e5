"""The command line's documentation: docs/cli.md is what tools/cli_docs.py writes from the parsers,
its synopses are the usage each command's ``--help`` prints, and every option's help states its
default."""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from textbound.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "cli.md"


def load_tool():
    sys.path.insert(0, str(ROOT / "tools"))  # the tool imports its sibling table_file, as when run there
    try:
        spec = importlib.util.spec_from_file_location("cli_docs", ROOT / "tools" / "cli_docs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "tools"))


cli_docs = load_tool()
COMMANDS = cli_docs.commands()


def words(text: str) -> list[str]:
    """The text with its wrapping undone: a usage wrapped at any width gives the same words."""
    return text.split()


def test_docs_are_what_the_tool_writes_from_the_parsers() -> None:
    assert DOCS.read_text(encoding="utf-8") == cli_docs.render(), "run: python tools/cli_docs.py"


def documented_synopses() -> list[str]:
    """The synopsis block of docs/cli.md, one synopsis per command (continuation lines joined)."""
    block = DOCS.read_text(encoding="utf-8").split("## Synopsis\n\n```\n", 1)[1].split("\n```", 1)[0]
    return [" ".join(words(entry)) for entry in re.split(r"\n(?=textbound)", block)]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_synopsis_is_the_usage_help_prints(capsys, command) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command.split()[1:], "--help"])
    assert exit_info.value.code == 0
    usage = capsys.readouterr().out.split("\n\n", 1)[0]  # up to the first blank line
    assert " ".join(words(usage.removeprefix("usage: "))) in documented_synopses()


def test_the_synopses_are_every_command_once() -> None:
    assert [synopsis.split(" [")[0] for synopsis in documented_synopses()] == list(COMMANDS)


def stated_defaults(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(option, help) of each option that can be left out, which must say what it is then."""
    required_groups = [group for group in parser._mutually_exclusive_groups if group.required]
    return [(action.option_strings[-1], action.help or "") for action in parser._actions
            if action.option_strings and not action.required and action.help is not argparse.SUPPRESS
            and not isinstance(action, argparse._HelpAction)
            and not any(action in group._group_actions for group in required_groups)]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_states_its_default(command) -> None:
    parser = COMMANDS[command]
    with cli_docs.help_width():
        rendered = parser.format_help()  # %(default)s filled in
    missing = [option for option, help_text in stated_defaults(parser)
               if "default" not in help_text and option != "--version"]
    assert missing == [], f"{command}: say what each of these is when left out"
    assert "(default: None)" not in rendered and "(default: [])" not in rendered


def test_the_tool_checks_and_the_check_fails_on_a_stale_file(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("# The `textbound` command line\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["cli_docs.py", "--check"])
    assert cli_docs.regenerate(stale, cli_docs.render, "docs") == 1
