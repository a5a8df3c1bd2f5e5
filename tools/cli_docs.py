"""Write docs/cli.md from the ``textbound`` command's own parsers: the synopsis of every command,
then each command's ``--help`` as it prints it, so the documentation cannot drift from the command
(tests/test_cli_docs.py fails when the file is out of date). The README links it, and may include
its synopsis block.

    python tools/cli_docs.py            # rewrites docs/cli.md
    python tools/cli_docs.py --check    # exits 1 if docs/cli.md is out of date
"""
from __future__ import annotations

import argparse
import os
import textwrap
from contextlib import contextmanager
from pathlib import Path

from table_file import regenerate

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
COLUMNS = 100  # the width the help is written at, whatever the terminal generating it
USAGE = "usage: "
FENCE = "```"


@contextmanager
def help_width(columns: int = COLUMNS):
    """argparse wraps its help at $COLUMNS - 2: the same text on every machine."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns + 2)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def commands() -> dict[str, argparse.ArgumentParser]:
    """The command line as ``--help`` names it (``"textbound"``, ``"textbound check"``, ...) -> its parser."""
    from textbound.cli import _parser

    parser = _parser()
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return {"textbound": parser, **{f"textbound {name}": sub for name, sub in subparsers.choices.items()}}


def synopsis(usage: str) -> str:
    """A parser's usage without ``usage: ``, its wrapped lines indented as under the command:
    ``synopsis("usage: textbound diff [-h] OLD NEW\\n") == "textbound diff [-h] OLD NEW"``."""
    lines = usage.strip().removeprefix(USAGE).splitlines()
    return "\n".join([lines[0], *(line[len(USAGE):] for line in lines[1:])])


def render() -> str:
    with help_width():
        parsers = commands()
        synopses = [synopsis(parser.format_usage()) for parser in parsers.values()]
        sections = [f"## `{name}`\n\n{FENCE}\n{parser.format_help().rstrip()}\n{FENCE}\n"
                    for name, parser in parsers.items()]
    intro = textwrap.dedent("""\
        # The `textbound` command line

        Written by `python tools/cli_docs.py` from the command's own parsers (textbound/cli.py), so it is
        what `--help` prints; `tests/test_cli_docs.py` fails when it is out of date. `python -m textbound`
        is the same command.

        ## Synopsis

        """)
    return intro + f"{FENCE}\n" + "\n".join(synopses) + f"\n{FENCE}\n\n" + "\n".join(sections)


if __name__ == "__main__":
    raise SystemExit(regenerate(DOCS, render, __doc__.splitlines()[0]))
