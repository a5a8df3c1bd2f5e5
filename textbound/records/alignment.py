"""Expected and actual side by side: lists of ids aligned token by token (id, piece, bytes), texts
character by character (character, code point, UTF-8 bytes), cut to a window around the first
difference. For the encode of "a1" by a tokenizer dropping the token after a digit:

       expected                      | actual
       id  piece  bytes              | id  piece  bytes
       64  "a"    61                 | 64  "a"    61
    >> 16  "1"    31                 |

report.md, the HTML report, compare's report and the triage all show a record this way, after its
example with every field labelled (``labelled_example``), and a streamed example as the timeline of
its calls where the run's evidence holds one (``render_timeline``).
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..naming.shape import Vocabulary

WINDOW_BEFORE, WINDOW_AFTER = 6, 10  # aligned rows shown around the first difference
MISSING = object()
MISSING_TEXT = "(none)"  # a field one side of a labelled example lacks


@cache
def vocabulary(folder: str) -> Vocabulary | None:
    """The vocabulary of a family folder, or None when it is gone (a report read elsewhere)."""
    try:
        return Vocabulary(Path(folder))
    except Exception:  # noqa: BLE001 - pieces are a convenience: ids alone still triage
        return None


@dataclass
class Row:
    expected: tuple[str, ...] | None  # cells of the expected side; None where it has nothing here
    actual: tuple[str, ...] | None
    differs: bool


@dataclass
class Alignment:
    """Expected and actual side by side, cut to a window around the first differing row."""

    path: str  # where in the values the compared parts are ("" for the whole values)
    columns: tuple[str, ...]
    rows: list[Row]
    first: int | None  # index in rows of the first difference
    hidden_before: int = 0
    hidden_after: int = 0
    notes: list[str] = field(default_factory=list)


def _descend(expected, actual) -> tuple[str, object, object]:
    """The innermost differing parts: the first differing key of two dicts with the same keys, the
    first differing item of two lists of the same length (unless they are lists of ids)."""
    path = ""
    while True:
        if isinstance(expected, dict) and isinstance(actual, dict) and expected.keys() == actual.keys():
            key = next((k for k in expected if expected[k] != actual[k]), None)
            if key is None:
                break
            path, expected, actual = f"{path}.{key}", expected[key], actual[key]
        elif (isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual)
              and not (ids_only(expected) and ids_only(actual))):
            index = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), None)
            if index is None:
                break
            path, expected, actual = f"{path}[{index}]", expected[index], actual[index]
        else:
            break
    return path, expected, actual


def ids_only(value) -> bool:
    """Whether ``value`` is a list of token ids (ints, no bools)."""
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _hex(data: bytes | None) -> str:
    return "?" if data is None else data.hex(" ")


def _token_cells(vocab: Vocabulary | None):
    def cells(token_id: int) -> tuple[str, ...]:
        if vocab is None:
            return (str(token_id),)
        piece = vocab.piece(token_id)
        return (str(token_id), "?" if piece is None else json.dumps(piece, ensure_ascii=False),
                _hex(vocab.token_bytes(token_id)))
    return cells


def _char_cells(char: str) -> tuple[str, ...]:
    return json.dumps(char, ensure_ascii=False), f"U+{ord(char):04X}", _hex(char.encode("utf-8", "surrogatepass"))


def _item_cells(item) -> tuple[str, ...]:
    return (json.dumps(item, ensure_ascii=False),)


def _hashable(items: list | str) -> list | str:
    """What difflib can compare: items as they are, or as JSON when they are lists or dicts."""
    if isinstance(items, str) or all(isinstance(i, (str, int, float, bool, type(None))) for i in items):
        return items
    return [json.dumps(i, sort_keys=True, ensure_ascii=False) for i in items]


def align(expected, actual, vocab: Vocabulary | None = None) -> Alignment:
    """Expected and actual aligned item by item (difflib), with the first difference marked."""
    path, expected, actual = _descend(expected, actual)
    if ids_only(expected) and ids_only(actual):
        columns = ("id", "piece", "bytes") if vocab else ("id",)
        cells = _token_cells(vocab)
    elif isinstance(expected, str) and isinstance(actual, str):
        columns, cells = ("char", "code point", "bytes"), _char_cells
    elif isinstance(expected, list) and isinstance(actual, list):
        columns, cells = ("item",), _item_cells
    else:
        row = Row(_item_cells(expected), _item_cells(actual), expected != actual)
        return Alignment(path, ("value",), [row], 0 if row.differs else None)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, _hashable(expected), _hashable(actual), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for offset in range(max(a1 - a0, b1 - b0)):
            left = expected[a0 + offset] if a0 + offset < a1 else MISSING
            right = actual[b0 + offset] if b0 + offset < b1 else MISSING
            rows.append(Row(None if left is MISSING else cells(left), None if right is MISSING else cells(right),
                            tag != "equal"))
    first = next((i for i, row in enumerate(rows) if row.differs), None)
    start = max(0, (first or 0) - WINDOW_BEFORE)
    end = min(len(rows), (first or 0) + WINDOW_AFTER + 1)
    return Alignment(path, columns, rows[start:end], None if first is None else first - start,
                     hidden_before=start, hidden_after=len(rows) - end)


def record_alignment(record: dict, families: dict[str, str]) -> Alignment:
    """The alignment of a record's expected and actual, with the pieces of its family's vocabulary;
    should aligning fail on some value, both sides plainly, so a report never loses an entry to it."""
    folder = families.get(record.get("family"))
    expected, actual = record.get("expected"), record.get("actual")
    try:
        return align(expected, actual, vocabulary(folder) if folder else None)
    except Exception as exc:  # noqa: BLE001 - the aligned view is a convenience; the values must still show
        return Alignment("", ("value",), [Row((repr(expected),), (repr(actual),), expected != actual)], 0,
                         notes=[f"no aligned view: {type(exc).__name__}: {exc}"])


def render_alignment(alignment: Alignment, sides: tuple[str, str] = ("expected", "actual")) -> list[str]:
    """Plain-text lines: the expected side | the actual side (named by ``sides``), ">>" on the
    first differing row."""
    def joined(cells: tuple[str, ...] | None) -> str:
        return "  ".join(c[:40].ljust(widths[i]) for i, c in enumerate(cells)) if cells else ""

    widths = [max([len(name), *(len(c[:40]) for row in alignment.rows for side in (row.expected, row.actual)
                                if side for c in side[i:i + 1])]) for i, name in enumerate(alignment.columns)]
    width = sum(widths) + 2 * (len(widths) - 1)
    lines = [f"   at {alignment.path}" if alignment.path else None,
             f"   {sides[0].ljust(width)} | {sides[1]}",
             f"   {joined(alignment.columns).ljust(width)} | {joined(alignment.columns)}"]
    if alignment.hidden_before:
        lines.append(f"   ... {alignment.hidden_before} equal row(s) before")
    for index, row in enumerate(alignment.rows):
        mark = ">>" if index == alignment.first else ("* " if row.differs else "  ")
        lines.append(f"{mark} {joined(row.expected).ljust(width)} | {joined(row.actual)}".rstrip())
    if alignment.hidden_after:
        lines.append(f"   ... {alignment.hidden_after} more row(s)")
    lines += [f"   ({note})" for note in alignment.notes]
    return [line for line in lines if line is not None]


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else repr(value)


def labelled_example(record: dict) -> list[str]:
    """A record's minimized case, every field labelled: its input one field a line (ids in one row),
    then what was expected and what came, field by field where both are objects, then where the
    check saw them part:

        >>> labelled_example({"minimized_input": {"ids": [1, 2], "stops": ["a"]},
        ...                   "expected": {"output": "", "stopped": True}, "actual": {"output": "a", "stopped": False},
        ...                   "first_difference": {}})
        ['ids:     [1, 2]', 'stops:   ["a"]', '', "output:  expected '', actual 'a'", 'stopped: expected True, actual False']
    """
    given = record.get("minimized_input")
    given = given if isinstance(given, dict) else {"input": given}
    expected, actual = record.get("expected"), record.get("actual")
    if isinstance(expected, dict) and isinstance(actual, dict):
        compared = [(key, f"expected {_shown(expected.get(key, MISSING_TEXT))}, actual {_shown(actual.get(key, MISSING_TEXT))}")
                    for key in [*expected, *(k for k in actual if k not in expected)]]
    else:
        compared = [("expected", _shown(expected)), ("actual", _shown(actual))]
    details = [(key, value) for key, value in (record.get("first_difference") or {}).items()
               if isinstance(value, (str, int, float, bool)) or value is None]
    width = max([len(key) + 1 for key in [*given, *(k for k, _ in compared)]] + [len(k) + 3 for k, _ in details])
    lines = [f"{key + ':':{width}} {json.dumps(value, ensure_ascii=False)}" for key, value in given.items()]
    lines += ["", *(f"{key + ':':{width}} {value}" for key, value in compared)]
    if details:
        lines += ["", "where they part:", *(f"  {key + ':':{width - 2}} {_shown(value)}" for key, value in details)]
    return lines



def render_timeline(timeline: dict) -> list[str]:
    """A stream's calls one a line, the implementation's side | the reference's, ">>" on the first
    step where they part (textbound.run.timeline makes them)."""
    columns, rows = timeline["columns"], timeline["rows"]
    widths = [min(40, max(len(str(cell)) for cell in [name, *(row[i] for row in rows)])) for i, name in enumerate(columns)]

    def line(cells: list[str]) -> str:
        left = "  ".join(str(c)[:40].ljust(w) for c, w in zip(cells[:-1], widths))
        return f"{left} | {str(cells[-1])[:40]}"

    marked = [f"{'>>' if index == timeline.get('first') else '  '} {line(row)}".rstrip() for index, row in enumerate(rows)]
    return ["   timeline, call by call (>> the first call where the two sides part):", f"   {line(columns)}", *marked]
