"""The tools checks fire on broken parsers (tests/broken_tools_impl.py), record oracle
disagreements apart, and the whole-text reference agrees with its own oracles: transformers'
response parser on well-formed output, and the models' templates on round trips."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracles import tool_reference, transformers_response
from properties.model_outputs import ROUND_TRIP_TEMPLATES, TOOLS, assistant_messages, model_outputs
from textbound.checks import Subject, run_check
from textbound.checks.tools import assistant_part, message_difference, same_json, shared_template, well_formed
from textbound.divergence import Case
from textbound.implementation import Implementation

from .families import NEEDS_TEMPLATES, family_path, impl_subject

import tests.broken_tools_impl  # noqa: F401  (registers the variants as modules)

FAMILY = "gpt2"
SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
CALL = '<tool_call>{"name": "search", "arguments": {"query": "%s"}}</tool_call>'


def tool_case(prop: str, text: str, splits: list[int], fmt: str = "hermes", **flags) -> Case:
    return Case("tools", prop, FAMILY, {"format": fmt, "text": text, "tools": list(TOOLS), "reasoning": True,
                                       "starts_in_reasoning": False, "splits": splits, **flags})


def broken_subject(variant: str) -> Subject:
    return Subject(FAMILY, family_path(FAMILY), Implementation(f"tests.broken_tools_impl.{variant}"))


@pytest.mark.parametrize("variant, case, kind", [
    ("leaky_tags", tool_case("deltas", "Hi " + CALL % "x", [7]), "content gets text the reference does not have"),
    ("close_in_string", tool_case("whole", CALL % "</tool_call>", []), "hermes: "),
    ("index_from_one", tool_case("deltas", CALL % "x", [5, 30]), "call index does not start at 0"),
    ("name_repeated", tool_case("deltas", CALL % "x", [20, 40, 60]), "id or name repeated"),
    ("fixed_hold_back", tool_case("deltas", "A plain answer with no tags at all, long enough.", [30]),
     "held back though no tag can begin"),
    ("phantom_flagged_call", tool_case("whole", "Hi", []), "a call flagged malformed is not in the content"),
    ("empty_content", tool_case("whole", CALL % "x", []), 'content is "" beside tool calls'),
])
def test_each_check_fires_on_its_bug(variant: str, case: Case, kind: str):
    assert run_check(impl_subject(FAMILY), case) is None, "impl itself diverges here: the test proves nothing"
    found = run_check(broken_subject(variant), case)
    assert found is not None and kind in found.kind, found and found.describe()


def round_trip_case(fmt: str, reasoning: str) -> Case:
    call = {"id": "functions.get_weather:0" if fmt == "kimi_k2" else "call000000abc", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    message = {"role": "assistant", "content": "", "tool_calls": [call], "reasoning_content": reasoning}
    return Case("tools", "round_trip", FAMILY, {"format": fmt, "template": ROUND_TRIP_TEMPLATES[fmt][0],
                                                "message": message, "tools": list(TOOLS)})


@NEEDS_TEMPLATES
@pytest.mark.parametrize("fmt", ["glm45", "kimi_k2", "minimax_m2"])
def test_round_trip_fires_on_reasoning_dropped_where_the_template_renders_it(fmt):
    case = round_trip_case(fmt, "Let me think, then.")
    assert run_check(impl_subject(FAMILY), case) is None
    found = run_check(broken_subject("reasoning_dropped"), case)
    assert found is not None and found.kind == f"{fmt}: round trip: reasoning_content differs", found


@NEEDS_TEMPLATES
@pytest.mark.parametrize("fmt", ["deepseek_r1", "llama3_json"])
def test_round_trip_expects_no_reasoning_where_the_template_drops_it(fmt):
    """These templates drop reasoning; "," is in the call's JSON all the same, so it is no sign of it."""
    assert run_check(impl_subject(FAMILY), round_trip_case(fmt, ",")) is None


def _reference_impl() -> SimpleNamespace:
    """An implementation whose whole parse is the reference's, in impl's message shape."""
    def parse_response(text, format="hermes", **options):
        message = tool_reference.parse(text, format, **options).message()
        content = message["content"] or (None if message["calls"] else "")
        return {"role": "assistant", "content": content, "reasoning_content": message["reasoning_content"],
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
                    "name": call["name"], "arguments": json.dumps(call["arguments"])}}
                    for i, call in enumerate(message["calls"])]}
    return SimpleNamespace(parse_response=parse_response)


def test_oracle_disagreements_are_recorded_apart():
    # transformers' glm45 template keeps the whitespace after a call's name; the reference strips it.
    text = "<tool_call>f </tool_call>"
    case = tool_case("whole", text, [], fmt="glm45")
    answer = transformers_response.parse(text, "glm45")
    assert answer.message is not None and message_difference(tool_reference.parse(text, "glm45").message(), answer.message)
    found = run_check(Subject(FAMILY, family_path(FAMILY), _reference_impl()), case)
    assert found.kind.startswith("oracle disagreement: glm45") and found.first_difference["impl_sides_with"] == "reference"
    assert found.first_difference["transformers_limits"]


def test_malformed_output_is_the_references_alone():
    # transformers reads what an unterminated region holds; the reference makes the broken block content.
    text = "<tool_call>f<"
    assert not well_formed(tool_reference.parse(text, "glm45"))
    assert transformers_response.parse(text, "glm45").message["calls"]
    assert run_check(Subject(FAMILY, family_path(FAMILY), _reference_impl()), tool_case("whole", text, [], fmt="glm45")) is None


def test_reference_implementation_passes_the_whole_check():
    subject = Subject(FAMILY, family_path(FAMILY), _reference_impl())
    assert run_check(subject, tool_case("whole", "<think>hm</think>Hi " + CALL % "x", [])) is None


@given(st.sampled_from(tool_reference.TOOL_CALL_FORMATS).flatmap(model_outputs))
@settings(SETTINGS, derandomize=True)
def test_reference_agrees_with_transformers_on_well_formed_output(output):
    # Where vLLM and llama.cpp part from transformers (whitespace beside calls, a repeated opening
    # reasoning tag, hermes' other call tags) the reference follows the servers: with those rules
    # undone, the two agree; and the servers' rules change no call.
    options = {key: output[key] for key in ("tools", "reasoning", "starts_in_reasoning")}
    parsed = tool_reference.parse(output["text"], output["format"], **options, transformers_rules=True)
    answer = transformers_response.parse(output["text"], output["format"], **options)
    if answer.message is not None and well_formed(parsed):
        assert message_difference(parsed.message(), answer.message) is None
    servers = tool_reference.parse(output["text"], output["format"], **options).message()
    if not output["starts_in_reasoning"] and "<function" not in output["text"] and "<tool" not in output["text"]:
        assert message_difference(parsed.message(), servers, fields=("reasoning_content",)) is None


@NEEDS_TEMPLATES
@given(st.sampled_from(sorted(ROUND_TRIP_TEMPLATES)).flatmap(lambda fmt: st.tuples(st.just(fmt), assistant_messages(fmt))))
@SETTINGS
def test_reference_parses_rendered_messages_back(format_and_message):
    fmt, message = format_and_message
    template = shared_template(ROUND_TRIP_TEMPLATES[fmt][0])
    try:
        part, starts_in_reasoning = assistant_part(fmt, template, message, list(TOOLS))
    except ValueError:
        return  # this message is not written right after the generation prompt: no round trip
    parsed = tool_reference.parse(part, fmt, tools=list(TOOLS), starts_in_reasoning=starts_in_reasoning)
    arguments = [call["function"]["arguments"] for call in message["tool_calls"]]
    assert [call.name for call in parsed.calls] == [call["function"]["name"] for call in message["tool_calls"]]
    assert all(same_json(call.arguments, json.loads(a) if isinstance(a, str) else a)
               for call, a in zip(parsed.calls, arguments)), part


def test_reference_reads_a_name_tag_the_close_tag_cuts_as_content():
    text = '<function=a</function>>{}</function>'
    assert tool_reference.parse(text, "hermes").message() == {"content": text, "reasoning_content": "", "calls": []}


def test_hold_back_is_the_longest_tail_beginning_a_tag():
    assert tool_reference.held_back("hermes", "Hi <tool") == 5
    assert tool_reference.held_back("hermes", "Hi <") == 1
    assert tool_reference.held_back("hermes", "Hi <tool_call>") == 0  # a whole tag is not a beginning
    assert tool_reference.held_back("hermes", "Hi ") == 0
    # After a call, glue that may still be syntax: a separator, or whitespace before a section's end.
    assert tool_reference.held_back("llama3_json", '{"name": "f"} ;\n') == 3
    assert tool_reference.held_back("deepseek_v31", "<｜tool▁call▁end｜>\n<｜tool▁calls") == len("\n<｜tool▁calls")


def test_json_values_compare_numbers_by_value_but_not_booleans():
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json({"a": 1}, {"a": True}) and not same_json([0], [False])
