"""Checks of the ``stops`` component: impl's StopChecker against oracles.stop_reference, a
whole-text reference, on streamed text and on ids streamed through the detokenizer.

- stops/stream: StopChecker's output and ``stop_string`` (the stop that ended the stream, what
  OpenAI's API reports as the stop reason; None when none did) equal oracles.stop_reference's
  ``stop_outcome`` for every split of the text, it never releases text that the reference cuts off,
  and while no stop has completed it holds back exactly the longest tail that may still begin a stop.
- stops/pipeline: ids -> IncrementalDetokenizer -> StopChecker, streamed, equals ``stop_outcome`` of
  the oracle's whole decode, stop string included.
"""
from __future__ import annotations

from collections.abc import Iterator

from oracles.stop_reference import held_back_reference, stop_outcome

from ..divergence import Case, Divergence, first_index
from ..shape import Named, text_shape
from .registry import Subject, check, impl_call, oracle_call, text_window
from .streaming import StreamInput, chunks


def _reference(text: str, stops: list[str], include: bool) -> dict:
    """What the stream must end with: ``{"output", "stopped", "stop_string"}`` (JSON, for reports)."""
    outcome = stop_outcome(text, stops, include)
    return {"output": outcome.output, "stopped": outcome.stopped, "stop_string": outcome.stop_string}


def _observed(output: str, checker) -> dict:
    return {"output": output, "stopped": checker.stopped, "stop_string": checker.stop_string}


STOPPED_EARLY = "stopped where the reference does not"
MISSED = "missed a stop"  # ran on past where the reference stops, whether it stops later or never
EARLIER_START = "stopped at a stop string that starts earlier"  # though the reference's completes first
RELEASES = "releases text that may begin a stop"
HOLDS_MORE = "holds back more than may begin a stop"


def _released_kind(expected: str, output: str, seen: str, stops: list[str]) -> str:
    """What a stream that has not stopped released past the reference's output: text the reference
    cuts off at a stop completed in what was seen is a stop run past; one not yet completed there
    is text that may begin a stop, released (one bug, whether the stop completes in a later delta
    or not): ``_released_kind("a", "ab", "ab", ["bc"]) == RELEASES``; else the output's shape so far."""
    if not output.startswith(expected):
        return outcome_kind(expected[:len(output)], output, stops)
    return MISSED if stop_outcome(seen, stops, False).stopped else RELEASES


def _stop_span(outcome: dict, include: bool) -> tuple[int, int]:
    """Where the stop that ended a stream starts and ends in its text: after the output, or at the
    output's end where the output holds it (a stream ignoring include_stop is placed by its output)."""
    output, stop = outcome["output"], outcome["stop_string"]
    start = len(output) - len(stop) if include and output.endswith(stop) else len(output)
    return start, start + len(stop)


def _other_stop_kind(expected: dict, actual: dict, include: bool) -> str | None:
    """Two stopped streams ended at different stops: by one starting earlier though the reference's
    completes first (a search for the lowest start), or by one completing later, the reference's
    missed (whether the same string later on or another); None where they are the same stop."""
    if not (expected["stopped"] and actual["stopped"] and isinstance(actual["stop_string"], str)):
        return None
    (theirs, their_end), (mine, my_end) = _stop_span(expected, include), _stop_span(actual, include)
    if mine < theirs and actual["stop_string"] != expected["stop_string"]:
        return EARLIER_START
    ran_past = my_end > their_end or (mine > theirs and actual["output"] != expected["output"])
    return MISSED if ran_past else None


def outcome_kind(expected: str, actual: str, stops: list[str], label: str = "output", stopped: bool = True) -> str:
    """How a stream's ``label`` differs from the reference's: where one is the other cut short, by
    the stop string the cut is (``outcome_kind("ab##", "ab", ["##"]) == "output: drops the stop
    string"``) or by which side stopped first (``outcome_kind("abc", "ab", ["##"]) == "stopped where
    the reference does not"``), or, in a stream that did not stop, by which side ends first; else by
    the shape of the difference, told by the stop strings it holds."""
    if expected.startswith(actual):
        if not stopped:
            return f"{label}: ends before the reference's"
        return f"{label}: drops the stop string" if expected[len(actual):] in stops else STOPPED_EARLY
    if actual.startswith(expected):
        tail = actual[len(expected):]
        if not stopped:
            return f"{label}: runs on past the reference's end"
        if tail in stops:
            return f"{label}: keeps the stop string"
        return f"{label}: keeps part of a stop string" if any(s.startswith(tail) for s in stops) else MISSED
    return f"{label}: {text_shape(expected, actual, Named('a stop string', tuple(stops)))}"


def _stops_divergence(case: Case, expected: dict, actual: dict) -> Divergence | None:
    """None when the outcomes agree; else the first thing that differs: whether, where, or by which stop."""
    if actual == expected:
        return None
    if actual["stopped"] != expected["stopped"]:
        return Divergence(case, expected, actual, STOPPED_EARLY if actual["stopped"] else MISSED)
    want, got = expected["output"], actual["output"]
    if other := _other_stop_kind(expected, actual, case.input.get("include_stop", False)):
        return Divergence(case, expected, actual, other,
                          {"expected_stop_string": expected["stop_string"], "actual_stop_string": actual["stop_string"]})
    if got != want:
        index = first_index(want, got)
        kind = outcome_kind(want, got, case.input["stops"], stopped=expected["stopped"])
        return Divergence(case, expected, actual, kind, {
            "index": index, "expected_window": text_window(want, index), "actual_window": text_window(got, index)})
    return Divergence(case, expected, actual, "reports another stop string",
                      {"expected_stop_string": expected["stop_string"], "actual_stop_string": actual["stop_string"]})


@check("stops", "stream", minimize="text")
def check_stops_stream(subject: Subject, case: Case) -> Divergence | None:
    text, stops, include = case.input["text"], case.input["stops"], case.input.get("include_stop", False)
    deltas = ["".join(part) for part in chunks(list(text), case.input.get("splits", []))]
    expected = _reference(text, stops, include)
    longest = max(map(len, stops), default=0)

    def run() -> tuple[dict, Divergence | None]:
        checker = subject.impl.StopChecker(stops, include_stop=include)
        output, seen = "", ""
        for step, delta in enumerate(deltas):
            output += checker.add(delta)
            seen += delta
            if checker.stopped:
                continue  # where and by which stop it stopped (and what it released since): the outcome says
            if not expected["output"].startswith(output):
                index = first_index(expected["output"], output)
                kind = _released_kind(expected["output"], output, seen, stops)
                return _observed(output, checker), Divergence(case, expected["output"], output, kind,
                                                              {"after": f"add {step}", "index": index})
            # The held tail is shorter than the longest stop, so the reference needs only that much.
            should_hold = held_back_reference(seen[-longest:], stops) if longest else 0
            held = len(seen) - len(output)
            if held != should_hold:
                kind = HOLDS_MORE if held > should_hold else RELEASES
                return _observed(output, checker), Divergence(case, should_hold, held, kind,
                                                              {"after": f"add {step}", "seen": seen})
        if not checker.stopped:
            output += checker.finish()
        return _observed(output, checker), None

    result, failure = impl_call(case, expected, run)
    if failure:
        return failure
    actual, found = result
    return found or _stops_divergence(case, expected, actual)


@check("stops", "pipeline", minimize="ids")
def check_stops_pipeline(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    stops, include = case.input["stops"], case.input.get("include_stop", False)
    whole, oracle_error = oracle_call(lambda: subject.oracle.decode(given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # the detokenizer/stream check judges what to do when the oracle cannot decode
    expected = _reference(whole, stops, include)

    def run() -> dict:
        detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens)
        checker = subject.impl.StopChecker(stops, include_stop=include)
        def deltas() -> Iterator[str]:
            for chunk in given.chunks:
                yield detokenizer.add(chunk)
            yield detokenizer.flush()

        output = ""
        for delta in deltas():
            output += checker.add(delta)
            if checker.stopped:
                return _observed(output, checker)
        return _observed(output + checker.finish(), checker)

    actual, failure = impl_call(case, expected, run)
    return failure or _stops_divergence(case, expected, actual)

