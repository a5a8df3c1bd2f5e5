"""Checks of the ``stops`` component: impl's StopChecker against oracles.stop_reference, a
whole-text reference, on streamed text and on ids streamed through the detokenizer.

- stops/stream: StopChecker's output and ``stop_string`` (the stop that ended the stream, what
  OpenAI's API reports as the stop reason; None when none did) equal oracles.stop_reference's
  ``stop_outcome`` for every split of the text, it never releases text that the reference cuts off,
  and while no stop has completed it holds back exactly the longest tail that may still begin a stop.
- stops/pipeline: ids -> IncrementalDetokenizer -> StopChecker, streamed, equals ``stop_outcome`` of
  the oracle's whole decode, stop string included. Where it does not, the kind is what the checker
  first did wrong on the way, judged as stops/stream judges each delta (while the deltas begin the
  whole decode), else how the outcome differs: one bug gets one kind in both checks.

A stream that stopped at, or named, another stop than the reference's is run once more on a probe
(one delta, more text after its stop; the reference's stop listed first), so that its kind says what
the checker does there: stops by the list's order, at the lowest start, only where a delta ends, or
releases the rest of its stop's delta.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from textbound.oracles.stop_reference import held_back_reference, stop_outcome

from ..naming.divergence import Case, Divergence, first_index
from ..naming.shape import Named, text_shape
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
BY_LIST_ORDER = "stopped at a stop string by its place in the list"  # the reference's cut is the same in any order
REPORTS_ANOTHER = "reports another stop string"  # where the reference stops
PAST_STOP = "releases text after the stop string in its delta"  # having stopped at the reference's stop
HELD_BACK = "characters held back"  # what a stream that has not stopped holds after a delta
FILLER = "\ue000"  # a probe's text after a stop: the first character from this one (private use) no stop holds


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
    if actual["stop_string"] == expected["stop_string"] and len(actual["output"]) == len(expected["output"]):
        return None  # the same stop, cut at the same length: the output's own shape tells (a "\n" shown as " ")
    (theirs, their_end), (mine, my_end) = _stop_span(expected, include), _stop_span(actual, include)
    if mine < theirs and actual["stop_string"] != expected["stop_string"]:
        return EARLIER_START
    ran_past = my_end > their_end or (mine > theirs and actual["output"] != expected["output"])
    return MISSED if ran_past else None


Probe = Callable[[list[str], bool], "dict | None"]


def _probe(subject: Subject, case: Case, text: str, actual: dict) -> Probe:
    """What the checker does on one delta holding ``text`` through the end of the stop it stopped
    at and then a character no stop holds, for the stops in a given order and an include_stop:
    ``{"output", "stop_string", "past_stop"}`` (whether it stopped yet released that character),
    None where it raised. The reference's cut is the same whatever the stops' order, and whatever
    text follows a stop in its delta."""
    def outcome(ordered: list[str], include: bool) -> dict | None:
        filler = next(char for char in map(chr, itertools.count(ord(FILLER))) if not any(char in s for s in ordered))
        _, end = _stop_span(actual, case.input.get("include_stop", False))
        try:
            checker = subject.impl.StopChecker(ordered, include_stop=include)
            output = checker.add(text[:end] + filler)
            return {"output": output, "stop_string": checker.stop_string,
                    "past_stop": checker.stopped and output.endswith(filler)}
        except Exception:  # the implementation under test may fail in any way on an input of ours
            return None
    return outcome


def _probed_kind(kind: str, expected: dict, actual: dict, stops: list[str], probe: Probe) -> str:
    """``kind``, for a stream that stopped at or reported another stop than the reference's, as the
    probe (``_probe``) tells it apart. A cut that moves when the reference's stop is listed first
    (where the stop starts, or with include_stop where it ends) is chosen by the stops' order,
    wherever the stop chosen is. A stop starting earlier that the checker does not stop at again
    with more text after it in its delta was met by its ending a delta, the reference's stop missed
    (one bug, whichever stop ended the delta). "xabcd" in one delta, stops "abcd" and "b": a checker
    taking the lowest start and one looking only where a delta ends both give "x", "abcd"; on the
    probe "xabcd\ue000" the first gives "x", "abcd" again (EARLIER_START), the second not (MISSED).
    A stream cut past the reference's stop though it names it, that on the probe releases the
    character after the stop, releases the rest of the stop's delta (whether that delta ends at the
    stop or goes on; not a stop missed)."""
    theirs_first = [expected["stop_string"], *(stop for stop in stops if stop != expected["stop_string"])]
    for include in (False, True):
        listed, reordered = probe(stops, include), probe(theirs_first, include)
        if listed and reordered and listed["output"] != reordered["output"]:
            return BY_LIST_ORDER
    probed = probe(stops, False)
    if kind == EARLIER_START and not (probed and probed["stop_string"] == actual["stop_string"]):
        return MISSED
    if kind == MISSED and actual["stop_string"] == expected["stop_string"] and probed and probed["past_stop"]:
        return PAST_STOP
    return kind


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


def _stops_divergence(case: Case, expected: dict, actual: dict, probe: Probe) -> Divergence | None:
    """None when the outcomes agree; else the first thing that differs: whether, where, or by which
    stop (told apart by ``probe``, see ``_probed_kind``)."""
    if actual == expected:
        return None
    if actual["stopped"] != expected["stopped"]:
        return Divergence(case, expected, actual, STOPPED_EARLY if actual["stopped"] else MISSED)
    want, got = expected["output"], actual["output"]
    other = _other_stop_kind(expected, actual, case.input.get("include_stop", False))
    if other or got == want:
        kind = _probed_kind(other or REPORTS_ANOTHER, expected, actual, case.input["stops"], probe)
        return Divergence(case, expected, actual, kind,
                          {"expected_stop_string": expected["stop_string"], "actual_stop_string": actual["stop_string"]})
    index = first_index(want, got)
    kind = outcome_kind(want, got, case.input["stops"], stopped=expected["stopped"])
    return Divergence(case, expected, actual, kind, {
        "index": index, "expected_window": text_window(want, index), "actual_window": text_window(got, index)})


def _step_fault(case: Case, expected_output: str, output: str, seen: str, step: int) -> Divergence | None:
    """After a delta that did not stop the stream: text released that the reference cuts off, or a
    tail held back other than the longest that may still begin a stop; None when neither."""
    stops = case.input["stops"]
    if not expected_output.startswith(output):
        return Divergence(case, expected_output, output, _released_kind(expected_output, output, seen, stops),
                          {"after": f"add {step}", "index": first_index(expected_output, output)})
    # The held tail is shorter than the longest stop, so the reference needs only that much.
    longest = max(map(len, stops), default=0)
    should_hold = held_back_reference(seen[-longest:], stops) if longest else 0
    held = len(seen) - len(output)
    if held != should_hold:  # the counts labelled, so that a report says what they count
        return Divergence(case, {HELD_BACK: should_hold}, {HELD_BACK: held}, HOLDS_MORE if held > should_hold else RELEASES,
                          {"after": f"add {step}", "seen": seen})
    return None


def _first_fault(case: Case, expected_output: str, whole: str, steps: list[tuple[str, str]]) -> Divergence | None:
    """The first of ``steps`` (a delta, what the checker released for it) after which ``_step_fault``
    finds one, while the deltas begin ``whole``: deltas that leave it are the detokenizer's doing."""
    output = seen = ""
    for step, (delta, released) in enumerate(steps):
        output, seen = output + released, seen + delta
        if not whole.startswith(seen):
            return None
        if fault := _step_fault(case, expected_output, output, seen, step):
            return fault
    return None


@check("stops", "stream", minimize="text")
def check_stops_stream(subject: Subject, case: Case) -> Divergence | None:
    text, stops, include = case.input["text"], case.input["stops"], case.input.get("include_stop", False)
    deltas = ["".join(part) for part in chunks(list(text), case.input.get("splits", []))]
    expected = _reference(text, stops, include)

    def run() -> tuple[dict, Divergence | None]:
        checker = subject.impl.StopChecker(stops, include_stop=include)
        output, seen = "", ""
        for step, delta in enumerate(deltas):
            output += checker.add(delta)
            seen += delta
            if checker.stopped:
                continue  # where and by which stop it stopped (and what it released since): the outcome says
            if fault := _step_fault(case, expected["output"], output, seen, step):
                return _observed(output, checker), fault
        if not checker.stopped:
            output += checker.finish()
        return _observed(output, checker), None

    result, failure = impl_call(case, expected, run)
    if failure:
        return failure
    actual, found = result
    return found or _stops_divergence(case, expected, actual, _probe(subject, case, text, actual))


@check("stops", "pipeline", minimize="ids")
def check_stops_pipeline(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    stops, include = case.input["stops"], case.input.get("include_stop", False)
    whole, oracle_error = oracle_call(lambda: subject.oracle.decode(given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # the detokenizer/stream check judges what to do when the oracle cannot decode
    expected = _reference(whole, stops, include)

    def run() -> tuple[dict, list[tuple[str, str]]]:
        detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens)
        checker = subject.impl.StopChecker(stops, include_stop=include)
        def deltas() -> Iterator[str]:
            for chunk in given.chunks:
                yield detokenizer.add(chunk)
            yield detokenizer.flush()

        output, steps = "", []  # each delta that did not stop the stream, and what it released
        for delta in deltas():
            released = checker.add(delta)
            output += released
            if checker.stopped:
                return _observed(output, checker), steps
            steps.append((delta, released))
        return _observed(output + checker.finish(), checker), steps

    result, failure = impl_call(case, expected, run)
    if failure:
        return failure
    actual, steps = result
    found = _stops_divergence(case, expected, actual, _probe(subject, case, whole, actual))
    # The outcome decides whether the pipeline diverges (a tail held back wrongly but released in the
    # end is stops/stream's to report); the first fault on the way, if any, names it.
    fault = found and _first_fault(case, expected["output"], whole, steps)
    return Divergence(case, expected, actual, fault.kind, fault.first_difference) if fault else found
