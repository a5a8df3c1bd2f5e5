"""impl.streaming.stops.StopChecker against the whole-text reference in oracles.stop_reference.

Every way of splitting a text into deltas must give the reference's output and stopped flag,
and after every delta the checker must have emitted exactly the text that can no longer become
part of a stop: the reference output once stopped, else all but the minimal held-back tail.
"""
from __future__ import annotations

import itertools
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.checks import Subject, run_check
from textbound.families import build_family
from textbound.impl.streaming.stops import StopChecker
from textbound.naming.divergence import Case
from textbound.oracles.stop_reference import apply_stops, held_back_reference, stop_outcome
from textbound.oracles.tokenizers_oracle import TokenizersOracle
from textbound.plan.implementation import Implementation

# Few distinct pieces, so stops really occur; with newlines, multi-code-point emoji and
# special-token text.
PIECES = ["a", "b", "c", "\n", "\r\n", " ", "é", "😀", "👍🏽", "<|im_end|>", "<|", "|>", "</s>"]
texts = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)
short_stops = st.lists(st.sampled_from(PIECES), max_size=4).map("".join)  # "" included


@st.composite
def text_and_stops(draw: st.DrawFn, max_stops: int = 20) -> tuple[str, list[str]]:
    """A text and stops that often occur in it: random short strings or slices of the text."""
    text = draw(texts)
    bounds = st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(sorted)
    slices = bounds.map(lambda b: text[b[0]:b[1]])
    stops = draw(st.lists(st.one_of(short_stops, slices), max_size=max_stops))
    return text, stops


@st.composite
def split_text(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random points, empty deltas included."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def check_stream(deltas: list[str], stops: list[str], include_stop: bool) -> None:
    """Stream ``deltas`` through a checker and hold it to the reference after every step."""
    text = "".join(deltas)
    final_output, final_stopped = apply_stops(text, stops, include_stop)
    checker = StopChecker(stops, include_stop)
    seen, emitted = "", ""
    for delta in deltas:
        was_stopped = checker.stopped
        released = checker.add(delta)
        if was_stopped:
            assert released == ""
        seen += delta
        emitted += released
        output_so_far, stopped_so_far = apply_stops(seen, stops, include_stop)
        assert checker.stopped == stopped_so_far
        if stopped_so_far:
            assert emitted == output_so_far
        else:
            assert emitted == seen[: len(seen) - held_back_reference(seen, stops)]
        # Nothing emitted is ever taken back, in particular no part of a stop that completes later.
        assert final_output.startswith(emitted)
    tail = checker.finish()
    if final_stopped:
        assert tail == ""
    assert emitted + tail == final_output
    assert checker.stopped == final_stopped
    assert checker.stop_string == stop_outcome(text, stops).stop_string


@settings(max_examples=400, deadline=None)
@given(st.data(), text_and_stops(), st.booleans())
def test_random_splits_match_reference(data: st.DataObject, case: tuple[str, list[str]], include_stop: bool):
    text, stops = case
    check_stream(data.draw(split_text(text)), stops, include_stop)


@settings(max_examples=60, deadline=None)
@given(text_and_stops(), st.booleans())
def test_every_split_of_short_text_matches_reference(case: tuple[str, list[str]], include_stop: bool):
    text, stops = case
    text = text[:8]
    for cut_here in itertools.product([False, True], repeat=max(len(text) - 1, 0)):
        cuts = [position for position, cut in enumerate(cut_here, start=1) if cut]
        bounds = [0, *cuts, len(text)]
        check_stream([text[start:end] for start, end in itertools.pairwise(bounds)], stops, include_stop)


@settings(max_examples=30, deadline=None)
@given(st.data(), text_and_stops(max_stops=200), st.booleans())
def test_many_stops(data: st.DataObject, case: tuple[str, list[str]], include_stop: bool):
    text, stops = case
    check_stream(data.draw(split_text(text)), stops, include_stop)


@pytest.mark.parametrize(
    "text, stops",
    [
        ("xababab", ["bab", "aba"]),  # overlapping: the earliest end wins
        ("xabcx", ["abc", "bc"]),  # same end: the longest wins
        ("xabcd", ["abcd", "b"]),  # a stop inside another ends first
        ("aaab", ["aab", "aaaa"]),  # a held tail that breaks and restarts
        ("a<|im_end|>b", ["<|im_end|>", "<|endoftext|>"]),
        ("line\r\nnext", ["\n", "\r\n"]),
        ("ok 👍🏽", ["👍"]),  # code points: the emoji's first half is a stop
        ("no stop here", ["", "zz"]),
        ("anything", []),
    ],
)
@pytest.mark.parametrize("include_stop", [False, True])
def test_targeted_cases_every_split(text: str, stops: list[str], include_stop: bool):
    for cut_here in itertools.product([False, True], repeat=len(text) - 1):
        cuts = [position for position, cut in enumerate(cut_here, start=1) if cut]
        bounds = [0, *cuts, len(text)]
        check_stream([text[start:end] for start, end in itertools.pairwise(bounds)], stops, include_stop)


# The reference is itself hand-written, so pin its reading of the rules on worked examples.
@pytest.mark.parametrize(
    "text, stops, include_stop, expected",
    [
        ("xababab", ["bab", "aba"], False, ("x", True)),
        ("xabcx", ["bc", "abc"], False, ("x", True)),
        ("xabcx", ["bc", "abc"], True, ("xabc", True)),
        ("xabcd", ["abcd", "b"], False, ("xa", True)),
        ("abc", ["", "zz"], False, ("abc", False)),
    ],
)
def test_reference_semantics(text: str, stops: list[str], include_stop: bool, expected: tuple[str, bool]):
    assert apply_stops(text, stops, include_stop) == expected


@pytest.mark.parametrize(
    "text, stops, expected",
    [
        ("xabcx", ["bc", "abc"], "abc"),  # same end: the longest is the one that cut
        ("xabcd", ["abcd", "b"], "b"),  # the earliest end, though another starts first
        ("abc", ["", "zz"], None),
    ],
)
def test_reference_stop_string(text: str, stops: list[str], expected: str | None):
    outcome = stop_outcome(text, stops)
    assert outcome.stop_string == expected and outcome.stopped == (expected is not None)
    # The stop reported is the one include_stop adds back.
    assert apply_stops(text, stops, True)[0] == outcome.output + (expected or "")


@pytest.mark.parametrize("prop, given", [
    ("stream", {"text": "xabcx", "stops": ["bc", "abc"], "splits": [2]}),
    ("pipeline", {"splits": [], "stops": ["bc", "abc"]}),
])
def test_check_compares_the_stop_string(prop: str, given: dict):
    """A checker cutting the text right but naming the first listed stop that ends there is caught."""
    family = build_family("gpt2")
    if prop == "pipeline":
        given = {**given, "ids": TokenizersOracle.from_dir(family).encode("xabcx")}
    case = Case("stops", prop, "gpt2", given)
    assert run_check(Subject("gpt2", family, Implementation("textbound.impl")), case) is None
    found = run_check(Subject("gpt2", family, Implementation("textbound.mutants.stops_wrong_stop_string")), case)
    assert found is not None and found.kind == "reports another stop string"
    assert found.first_difference == {"expected_stop_string": "abc", "actual_stop_string": "bc"}


def _stops_kind(impl: str, prop: str, given: dict) -> str | None:
    """The kind ``impl``'s checker gets on a case of ``prop`` on gpt2 (None: it passes); a pipeline
    case's ids are gpt2's encoding of each of ``given["pieces"]``, one delta each."""
    family = build_family("gpt2")
    if prop == "pipeline":
        encode = TokenizersOracle.from_dir(family).encode
        pieces = [encode(piece) for piece in given.pop("pieces")]
        given = {**given, "ids": [i for piece in pieces for i in piece],
                 "splits": list(itertools.accumulate(map(len, pieces)))[:-1], "skip_special_tokens": True}
    found = run_check(Subject("gpt2", family, Implementation(impl)), Case("stops", prop, "gpt2", given))
    return found and found.kind


@pytest.mark.parametrize("prop, given", [
    ("stream", {"text": "xabcd", "stops": ["abcd", "b"], "splits": []}),
    ("pipeline", {"pieces": ["xabcd"], "stops": ["abcd", "b"]}),
])
def test_an_earlier_start_is_told_from_a_stop_met_where_a_delta_ends(prop: str, given: dict):
    """"xabcd" in one delta, stops "abcd" and "b": a checker taking the stop that starts first and
    one looking for stops only where a delta ends both stop at "abcd" ("x", not "xa"); followed by
    more text in its delta, "abcd" stops the first again and not the second, which missed "b"."""
    assert _stops_kind("impl", prop, dict(given)) is None
    assert _stops_kind("textbound.mutants.stops_earliest_start", prop, dict(given)) == "stopped at a stop string that starts earlier"
    assert _stops_kind("tests.one_bug.stops_endswith_only", prop, dict(given)) == "missed a stop"


@pytest.mark.parametrize("prop, given", [
    ("stream", {"text": "there", "stops": ["re", "he"], "splits": []}),
    ("pipeline", {"pieces": ["there"], "stops": ["re", "he"]}),
])
def test_a_stop_chosen_by_its_place_in_the_list(prop: str, given: dict):
    """"there" in one delta, stops "re" and "he" (ai-dynamo/dynamo#14848): a checker taking the first
    listed stop in its newest text gives "the", not "t"; listed "he" first, it gives "t"."""
    assert _stops_kind("impl", prop, dict(given)) is None
    first_listed = "tests.one_bug.stops_first_listed"
    assert _stops_kind(first_listed, prop, dict(given)) == "stopped at a stop string by its place in the list"
    assert _stops_kind(first_listed, prop, {**given, "stops": ["he", "re"]}) is None


@pytest.mark.parametrize("prop, given", [
    ("stream", {"text": "a stop!", "stops": ["stop"], "splits": [4]}),
    ("stream", {"text": "a stop!", "stops": ["stop"], "splits": [6]}),  # the delta ends at the stop
    ("pipeline", {"pieces": ["a st", "op!"], "stops": ["stop"]}),
])
def test_text_after_the_stop_in_its_delta(prop: str, given: dict):
    """"a st", "op!", stop "stop": a checker releasing all of the delta a stop completes in gives
    "a stop!", not "a "; where the delta ends at the stop, "a stop", as one always including the stop
    would, told apart by more text after the stop in its delta."""
    assert _stops_kind("impl", prop, dict(given)) is None
    assert _stops_kind("tests.one_bug.stops_whole_delta", prop, dict(given)) == \
        "releases text after the stop string in its delta"


def test_pipeline_names_what_the_checker_first_did_wrong():
    """"xe", "s" with stops "s" and "es", include_stop: a checker looking in each delta alone releases
    "e", which may begin "es", then stops at "s" with the output right; the pipeline tells the
    release, as the stream does, not the stop string reported."""
    given = {"stops": ["s", "es"], "include_stop": True}
    assert _stops_kind("impl", "pipeline", {**given, "pieces": ["xe", "s"]}) is None
    assert _stops_kind("textbound.mutants.stops_within_delta", "pipeline", {**given, "pieces": ["xe", "s"]}) == \
        _stops_kind("textbound.mutants.stops_within_delta", "stream", {**given, "text": "xes", "splits": [2]}) == \
        "releases text that may begin a stop"
    assert _stops_kind("textbound.mutants.stops_wrong_stop_string", "pipeline", {**given, "pieces": ["xe", "s"]}) == \
        "reports another stop string"  # the same outcome, nothing released early


def test_reference_held_back():
    assert held_back_reference("xab", ["abc", "bx"]) == 2
    assert held_back_reference("xab", ["b"]) == 0  # a complete stop is not a proper prefix
    assert held_back_reference("xab", [""]) == 0


def test_after_stop_and_finish():
    checker = StopChecker(["END"])
    assert checker.add("abcEN") == "abc"
    assert checker.add("Dmore") == ""
    assert checker.stopped and checker.stop_string == "END"
    assert checker.add("more") == ""
    assert checker.finish() == ""

    checker = StopChecker(["END"])
    assert checker.add("abcEN") == "abc"
    assert checker.finish() == "EN"
    assert checker.finish() == ""
    assert not checker.stopped and checker.stop_string is None
    with pytest.raises(RuntimeError, match="after finish"):
        checker.add("D")


@pytest.mark.parametrize(
    "stops, message",
    [
        ("END", r"not a single str"),
        (b"END", r"not a single bytes"),
        (None, r"found NoneType"),
        (42, r"found int"),
        (["ok", 3], r"stops\[1\] must be str, found int: 3"),
        (["ok", "", None], r"stops\[2\] must be str, found NoneType: None"),
        ([b"END"], r"stops\[0\] must be str, found bytes: b'END'"),
    ],
)
def test_bad_stops(stops: object, message: str):
    with pytest.raises(TypeError, match=message):
        StopChecker(stops)  # type: ignore[arg-type]


@pytest.mark.parametrize("delta", [None, b"abc", 3, ["a"]])
def test_bad_delta(delta: object):
    checker = StopChecker(["x"])
    with pytest.raises(TypeError, match=f"add\\(\\) takes str, found {type(delta).__name__}"):
        checker.add(delta)  # type: ignore[arg-type]


def test_bad_include_stop():
    with pytest.raises(TypeError, match="include_stop must be bool, found str"):
        StopChecker(["x"], include_stop="yes")  # type: ignore[arg-type]


def test_a_module_with_only_a_stop_checker_is_checked_on_the_stream_and_its_pipeline_is_not_provided(monkeypatch):
    """stops/pipeline feeds the checker what the implementation's own detokenizer streams: without one,
    that property is reported not provided, never a divergence "raised AttributeError" on every case."""
    module = types.ModuleType("stops_only")
    module.StopChecker = StopChecker
    monkeypatch.setitem(sys.modules, "stops_only", module)
    impl = Implementation("stops_only")
    assert impl.provides("stops") and impl.missing_for("stops", "stream") == []
    assert impl.missing_for("stops", "pipeline") == ["Tokenizer", "IncrementalDetokenizer"]
