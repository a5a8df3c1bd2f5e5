"""impl against the servers' own tool-call parser tests (corpora/server_parser_tests: vLLM's
tests/tool_parsers and llama.cpp's tests/test-chat.cpp, each case stamped with its source file and
commit). Those expected outputs are the servers' truth, not a rule of ours: where vLLM and llama.cpp
disagree with each other or with transformers, a case can fail on purpose. So agreement is measured
per format and held at a floor (``FLOORS``: the cases impl agrees on today) instead of required whole;
a change that loses a case fails here, and one that wins cases should raise the floor. The floors
hold for the whole parse and for the stream fed a few characters at a time.

Only what a test asserts is compared: the calls (names, and arguments as JSON values), or the names
alone, the content (null counts as ""), the reasoning. Calls impl flags malformed are not calls.
"""
from __future__ import annotations

from collections import Counter

import pytest

from textbound import impl
from textbound.corpora import server_parser_tests
from textbound.checks.tools import message_of, same_json

CASES = server_parser_tests()["cases"]
# Cases impl agrees on, per format (of how many the corpus holds: see test_floors_name_every_format).
FLOORS = {"hermes": 45, "qwen3_coder": 49, "llama3_json": 24, "mistral": 26, "deepseek_r1": 27, "gpt_oss": 11,
          "kimi_k2": 38, "glm45": 61, "minimax_m2": 32, "deepseek_v31": 11}
PIECE = 3  # the streamed parse feeds the output this many characters at a time


def streamed_parse(text: str, format: str, **options) -> dict:
    """impl's message for ``text`` fed to its OutputParser ``PIECE`` characters at a time, assembled."""
    parser = impl.OutputParser(format, **options)
    deltas = [delta for start in range(0, len(text), PIECE) for delta in parser.feed(text[start:start + PIECE])]
    return impl.assemble(deltas + parser.feed("", final=True))


def disagreement(parse_response, case: dict) -> str | None:
    """The first asserted field where ``parse_response``'s message differs from the case's expected
    one, or None."""
    options = {key: case[key] for key in ("tools", "reasoning", "starts_in_reasoning") if key in case}
    actual = message_of(parse_response(case["text"], case["format"], **options))
    expected = case["expected"]
    for field in ("content", "reasoning_content"):
        if field in expected and expected[field] != actual[field]:
            return f"{field}: expected {expected[field]!r}, got {actual[field]!r}"
    if "call_names" in expected and expected["call_names"] != [call["name"] for call in actual["calls"]]:
        return f"call names: expected {expected['call_names']}, got {[call['name'] for call in actual['calls']]}"
    if "calls" in expected and not same_json(expected["calls"], actual["calls"]):
        return f"calls: expected {expected['calls']}, got {actual['calls']}"
    return None


def agreement(parse_response) -> tuple[Counter, Counter]:
    """(cases agreed on, cases) per format."""
    agreed, total = Counter(), Counter()
    for case in CASES:
        total[case["format"]] += 1
        agreed[case["format"]] += disagreement(parse_response, case) is None
    return agreed, total


def below_floor(agreed: Counter) -> dict[str, tuple[int, int]]:
    """Formats whose agreement fell under their floor: format -> (agreed, floor)."""
    return {fmt: (agreed[fmt], floor) for fmt, floor in FLOORS.items() if agreed[fmt] < floor}


def test_every_case_is_stamped_with_its_source():
    sources = server_parser_tests()["sources"]
    for case in CASES:
        source = sources[case["source"]]
        assert len(source["commit"]) == 40 and source["commit"] in source["url"], case["id"]
        assert case["format"] in impl.tools.FORMATS and case["expected"], case["id"]
    assert len({case["id"] for case in CASES}) == len(CASES)


def test_floors_name_every_format():
    _, total = agreement(impl.parse_response)
    assert set(FLOORS) == set(total) and all(0 < FLOORS[fmt] <= total[fmt] for fmt in total)


@pytest.mark.parametrize("parse", [impl.parse_response, streamed_parse], ids=["whole", "streamed"])
def test_impl_agreement_holds_its_floor(parse):
    agreed, total = agreement(parse)
    report = {fmt: f"{agreed[fmt]}/{total[fmt]}" for fmt in sorted(total)}
    assert not below_floor(agreed), report


def test_a_parser_that_finds_no_calls_falls_below_the_floors():
    def content_only(text, format, **options):
        return {"role": "assistant", "content": text}
    assert set(below_floor(agreement(content_only)[0])) == set(FLOORS)
