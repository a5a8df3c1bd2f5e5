"""The command line shared by the table generators: write a generated file, or check it is current."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def regenerate(path: Path, render: Callable[[], str], description: str) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="only report whether the file is up to date")
    args = parser.parse_args()
    text = render()
    if args.check:
        up_to_date = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'up to date' if up_to_date else 'OUT OF DATE'}")
        return 0 if up_to_date else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
