"""Checks of the ``stops`` component: impl's StopChecker against oracles.stop_reference, a
whole-text reference, on streamed text and on ids streamed through the detokenizer.

- stops/stream: StopChecker's output and ``stopped`` equal oracles.stop_reference.apply_stops for
  every split of the text, it never releases text that the reference cuts off, and while no stop
  has completed it holds back exactly the longest tail that may still begin a stop.
- stops/pipeline: ids -> IncrementalDetokenizer -> StopChecker, streamed, equals apply_stops of the
  oracle's whole decode.
"""
from __future__ import annotations

from collections.abc import Iterator

from oracles.stop_reference import apply_stops, held_back_reference

from ..divergence import Case, Divergence, char_kind, first_index
from .registry import Subject, check, impl_call, oracle_call
from .streaming import StreamInput, chunks


def _stops_divergence(case: Case, expected: tuple[str, bool], actual: tuple[str, bool]) -> Divergence:
    if actual[1] != expected[1]:
        kind = "stopped where the reference does not" if actual[1] else "missed a stop"
        return Divergence(case, expected, actual, kind)
    index = first_index(expected[0], actual[0])
    return Divergence(case, expected, actual, f"output differs at {char_kind(expected[0], index)}", {
        "index": index, "expected_window": expected[0][max(0, index - 8): index + 8],
        "actual_window": actual[0][max(0, index - 8): index + 8]})


@check("stops", "stream", minimize="text")
def check_stops_stream(subject: Subject, case: Case) -> Divergence | None:
    text, stops, include = case.input["text"], case.input["stops"], case.input.get("include_stop", False)
    deltas = ["".join(part) for part in chunks(list(text), case.input.get("splits", []))]
    expected = apply_stops(text, stops, include)
    longest = max(map(len, stops), default=0)

    def run() -> tuple[str, bool, Divergence | None]:
        checker = subject.impl.StopChecker(stops, include_stop=include)
        output, seen = "", ""
        for step, delta in enumerate(deltas):
            output += checker.add(delta)
            seen += delta
            if not expected[0].startswith(output):
                index = first_index(expected[0], output)
                return output, checker.stopped, Divergence(
                    case, expected[0], output, f"released text the reference cuts off at {char_kind(output, index)}",
                    {"after": f"add {step}", "index": index})
            if not checker.stopped:
                # The held tail is shorter than the longest stop, so the reference needs only that much.
                should_hold = held_back_reference(seen[-longest:], stops) if longest else 0
                held = len(seen) - len(output)
                if held != should_hold:
                    kind = "holds back more than may begin a stop" if held > should_hold else "releases text that may begin a stop"
                    return output, False, Divergence(case, should_hold, held, kind, {"after": f"add {step}", "seen": seen})
        if not checker.stopped:
            output += checker.finish()
        return output, checker.stopped, None

    result, failure = impl_call(case, expected, run)
    if failure:
        return failure
    output, stopped, found = result
    if found:
        return found
    return None if (output, stopped) == expected else _stops_divergence(case, expected, (output, stopped))


@check("stops", "pipeline", minimize="ids")
def check_stops_pipeline(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    stops, include = case.input["stops"], case.input.get("include_stop", False)
    whole, oracle_error = oracle_call(lambda: subject.oracle.decode(given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # the detokenizer/stream check judges what to do when the oracle cannot decode
    expected = apply_stops(whole, stops, include)

    def run() -> tuple[str, bool]:
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
                return output, True
        return output + checker.finish(), False

    actual, failure = impl_call(case, expected, run)
    if failure or actual == expected:
        return failure
    return _stops_divergence(case, expected, actual)

