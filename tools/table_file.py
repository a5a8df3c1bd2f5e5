"""What the generators of impl's Unicode tables share: where the tables live, the code points they
sweep, how a set of code points is written down, and the command line (write the file, or check it
is current), which every generator of tools/ uses (cli_docs.py too).

    >>> ranges([0x41, 0x42, 0x43, 0x61])
    [(65, 67), (97, 97)]
    >>> range_lines([(0x41, 0x43)], indent=4)
    '    (0x0041, 0x0043),'
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path

TABLES_DIR = Path(__file__).resolve().parent.parent / "impl" / "tokenizer"

# Every scalar value: surrogates cannot cross into Rust strings.
CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def ranges(code_points: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for cp in sorted(set(code_points)):
        if runs and runs[-1][1] == cp - 1:
            runs[-1] = (runs[-1][0], cp)
        else:
            runs.append((cp, cp))
    return runs


def range_lines(runs: list[tuple[int, int]], indent: int) -> str:
    """The runs as Python tuples, six to a line, each line indented by ``indent`` spaces."""
    cells = [f"(0x{first:04X}, 0x{last:04X})," for first, last in runs]
    return "\n".join(" " * indent + " ".join(cells[i:i + 6]) for i in range(0, len(cells), 6))


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
