"""A streamed example replayed call by call, the implementation beside the oracle-backed stand-ins
(textbound.run.stand_ins), so that a report shows a stream as it happened: per ``add`` the ids,
their bytes, what the implementation released and what the reference shows, the step where they
first part marked. For an unfinished "é" released as U+FFFD (gpt2, ids 127 and 102 one per add):

    call    ids    bytes  impl released  reference shows
    add 0   [127]  c3     "\ufffd"       ""              <- first
    add 1   [102]  a9     "\ufffd"       "é"
    flush   []            ""             ""

A timeline is plain JSON (``{"columns", "rows", "first", "input"}``, the input it replays) kept with
a signature's evidence; textbound.records renders it beside the record of that input.
"""
from __future__ import annotations

import json
from collections.abc import Callable

from ..checks import Subject
from ..checks.registry import family_vocabulary
from ..checks.streaming import StreamInput
from ..naming.divergence import Case, Divergence
from .stand_ins import OracleTokenizers, ReferenceStopChecker

MOST_STEPS = 64  # calls shown; a longer stream is cut after the step where the sides part (and a few more)
IDS_COLUMNS = ["call", "ids", "bytes", "impl released", "reference shows"]
TEXT_COLUMNS = ["call", "text given", "impl released", "reference shows"]


def _text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _answer(call: Callable[[], str]) -> str:
    """What a call shows, or the exception it raised (the implementation may fail in any way: that
    is its answer at that step)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {exc}"


def _bytes(subject: Subject, ids: list[int]) -> str:
    vocabulary = family_vocabulary(subject)
    return " ".join(("?" if (data := vocabulary.token_bytes(i)) is None else data.hex() or "-") for i in ids)


def _released(checker, delta: str) -> str:
    """What a stop checker released for ``delta``, and the stop it stopped at on this call."""
    before = checker.stopped
    released = _text(checker.add(delta))
    return released + (f" (stopped at {_text(checker.stop_string)})" if checker.stopped and not before else "")


def _detokenizer_rows(subject: Subject, given: StreamInput, oracle: OracleTokenizers) -> list[list[str]]:
    from textbound.adapters.tokenizers_adapter import IncrementalDetokenizer

    mine = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens,
                                               prompt_ids=given.prompt_ids)
    theirs = IncrementalDetokenizer(oracle.get(), given.skip_special_tokens, given.prompt_ids)
    rows = [["prompt", json.dumps(given.prompt_ids), _bytes(subject, given.prompt_ids), _text(mine.prompt_text),
             _text(theirs.prompt_text)]] if given.prompt_ids else []
    for index, chunk in enumerate(given.chunks):
        rows.append([f"add {index}", json.dumps(chunk), _bytes(subject, chunk), _answer(lambda: _text(mine.add(chunk))),
                     _text(theirs.add(chunk))])
    return [*rows, ["flush", "[]", "", _answer(lambda: _text(mine.flush())), _text(theirs.flush())]]


def _pipeline_rows(subject: Subject, given: StreamInput, case: Case, oracle: OracleTokenizers) -> list[list[str]]:
    from textbound.adapters.tokenizers_adapter import IncrementalDetokenizer

    stops, include = case.input["stops"], case.input.get("include_stop", False)
    sides = [(subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens),
              subject.impl.StopChecker(stops, include_stop=include)),
             (IncrementalDetokenizer(oracle.get(), given.skip_special_tokens), ReferenceStopChecker(stops, include))]

    def step(detokenizer, checker, call: Callable) -> str:
        def shown() -> str:
            delta = call(detokenizer)
            return f"{_text(delta)} -> {_released(checker, delta)}"
        return _answer(shown)

    rows = [[f"add {index}", json.dumps(chunk), _bytes(subject, chunk),
             *(step(d, c, lambda d, chunk=chunk: d.add(chunk)) for d, c in sides)]
            for index, chunk in enumerate(given.chunks)]
    rows.append(["flush", "[]", "", *(step(d, c, lambda d: d.flush()) for d, c in sides)])
    return [*rows, ["finish", "", "", *(_answer(lambda c=c: _text(c.finish())) for _, c in sides)]]


def _stops_rows(subject: Subject, case: Case) -> list[list[str]]:
    from ..checks.streaming import chunks

    stops, include = case.input["stops"], case.input.get("include_stop", False)
    mine, theirs = subject.impl.StopChecker(stops, include_stop=include), ReferenceStopChecker(stops, include)
    rows = []
    for index, delta in enumerate("".join(part) for part in chunks(list(case.input["text"]), case.input.get("splits", []))):
        rows.append([f"add {index}", _text(delta), _answer(lambda: _released(mine, delta)), _released(theirs, delta)])
    return [*rows, ["finish", "", _answer(lambda: _text(mine.finish())), _text(theirs.finish())]]


def _quiet_runs_joined(rows: list[list[str]]) -> list[list[str]]:
    """Consecutive calls that give nothing and show nothing on either side (a case's empty deltas)
    as one row: ``add 2`` to ``add 13`` as ``add 2-13``."""
    def quiet(row: list[str]) -> bool:
        return row[0].startswith("add ") and row[1] in ("[]", '""') and all(cell in ("", '""', '"" -> ""') for cell in row[2:])

    joined: list[list[str]] = []
    for row in rows:
        if joined and quiet(row) and quiet(joined[-1]):
            joined[-1] = [f"{joined[-1][0].split('-')[0]}-{row[0].removeprefix('add ')}", *row[1:]]
        else:
            joined.append(row)
    return joined


def _first(rows: list[list[str]], after: str | None) -> int | None:
    """The step the check named (``first_difference.after``), else the first whose two sides part."""
    calls = [row[0] for row in rows]
    if after in calls:
        return calls.index(after)
    return next((index for index, row in enumerate(rows) if row[-2] != row[-1]), None)


def timeline(subject: Subject, divergence: Divergence, oracle: OracleTokenizers) -> dict | None:
    """The timeline of a streamed divergence's case (detokenizer and stops streams), None for other
    properties; a stream that cannot be replayed (an implementation raising on setup) has none."""
    case = divergence.smallest
    where = (case.component, case.property)
    try:
        if where in (("detokenizer", "stream"), ("detokenizer", "decode_stream")):
            columns, rows = IDS_COLUMNS, _detokenizer_rows(subject, StreamInput.of(case), oracle)
        elif where == ("stops", "pipeline"):
            columns, rows = IDS_COLUMNS, _pipeline_rows(subject, StreamInput.of(case), case, oracle)
        elif where == ("stops", "stream"):
            columns, rows = TEXT_COLUMNS, _stops_rows(subject, case)
        else:
            return None
    except Exception:  # noqa: BLE001 - a timeline is a view: without one the report shows the values aligned
        return None
    rows = _quiet_runs_joined(rows)
    first = _first(rows, divergence.first_difference.get("after"))
    if len(rows) > MOST_STEPS:
        keep = max(MOST_STEPS, (first or 0) + 4)
        rows = [*rows[:keep], [f"... {len(rows) - keep} more call(s)", *[""] * (len(columns) - 1)]]
    return {"columns": columns, "rows": rows, "first": first, "input": case.input}
