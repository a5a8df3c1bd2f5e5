"""The tools checks fire on broken parsers (tests/broken_tools_impl.py), record oracle
disagreements apart, and the whole-text reference agrees with its own oracles: transformers'
response parser on well-formed output, and the models' templates on round trips."""
from __future__ import annotations

import json
import sys
from types import ModuleType, SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.broken_tools_impl  # noqa: F401  (registers the variants as modules)
from textbound import impl
from textbound.checks import Subject, run_check
from textbound.checks.tools import assistant_part, message_difference, same_json, shared_template, well_formed
from textbound.naming.divergence import Case, is_oracle_disagreement
from textbound.oracles import tool_reference, transformers_response
from textbound.plan.implementation import Implementation
from textbound.properties.model_outputs import ROUND_TRIP_TEMPLATES, TOOLS, assistant_messages, model_outputs

from .families import NEEDS_TEMPLATES, family_path, impl_subject
from .test_shape import component_signatures

FAMILY = "gpt2"
SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
CALL = '<tool_call>{"name": "search", "arguments": {"query": "%s"}}</tool_call>'


def tool_case(prop: str, text: str, splits: list[int], fmt: str = "hermes", **flags) -> Case:
    return Case("tools", prop, FAMILY, {"format": fmt, "text": text, "tools": list(TOOLS), "reasoning": True,
                                       "starts_in_reasoning": False, "splits": splits, **flags})


def module_subject(monkeypatch, name: str, **names) -> Subject:
    """FAMILY checked on an --impl module holding ``names``."""
    module = ModuleType(name)
    module.__dict__.update(names)
    monkeypatch.setitem(sys.modules, name, module)
    return Subject(FAMILY, family_path(FAMILY), Implementation(name))


def broken_subject(variant: str) -> Subject:
    return Subject(FAMILY, family_path(FAMILY), Implementation(f"tests.broken_tools_impl.{variant}"))


@pytest.mark.parametrize("variant, case, kind", [
    ("leaky_tags", tool_case("stream", "Hi " + CALL % "x", [7]), "stream: content differs"),
    ("close_in_string", tool_case("whole", CALL % "</tool_call>", []), "content differs: a call read as content"),
    ("index_from_one", tool_case("deltas", CALL % "x", [5, 30]), "call index does not start at 0 and grow by one"),
    ("name_repeated", tool_case("stream", CALL % "x", [20, 40, 60]), "stream: name differs"),
    ("fixed_hold_back", tool_case("deltas", "A plain answer with no tags at all, long enough.", [30]),
     "content held back though no tag can begin"),
    ("phantom_flagged_call", tool_case("whole", "Hi", []), "a call flagged malformed is not in the content"),
    ("empty_content", tool_case("whole", CALL % "x", []), 'content is "" beside tool calls, not null'),
])
def test_each_check_fires_on_its_bug(variant: str, case: Case, kind: str):
    assert run_check(impl_subject(FAMILY), case) is None, "impl itself diverges here: the test proves nothing"
    found = run_check(broken_subject(variant), case)
    assert found is not None and found.kind == kind, found and found.describe()
    assert found.first_difference["format"] == "hermes"  # the kind does not name the format; the details do


class IdRepeated:
    """impl's OutputParser sending each call's id again in its later deltas: nothing the assembled
    message shows (the last id wins), only the deltas."""

    def __init__(self, format: str = "hermes", **options):
        self.parser, self.ids = impl.OutputParser(format, **options), {}

    def feed(self, text: str, final: bool = False) -> list[dict]:
        deltas = self.parser.feed(text, final=final)
        for call in (call for delta in deltas for call in delta.get("tool_calls") or []):
            call["id"] = self.ids.setdefault(call["index"], call.get("id"))
        return deltas


def test_an_id_repeated_in_a_later_delta_is_named_by_the_deltas(monkeypatch):
    case = tool_case("deltas", CALL % "x", [20, 40, 60])
    subject = module_subject(monkeypatch, "id_repeated", OutputParser=IdRepeated, parse_response=impl.parse_response,
                             assemble=impl.assemble)
    assert run_check(impl_subject(FAMILY), case) is None
    assert run_check(subject, Case("tools", "stream", FAMILY, case.input)) is None
    found = run_check(subject, case)
    assert found is not None and found.kind == "id or name repeated in a later delta", found


@pytest.mark.parametrize("module, case, left_to", [
    # a tag leaked into the content is in what the deltas assemble to: the stream case names it
    ("tests.broken_tools_impl.leaky_tags", tool_case("deltas", "Hi " + CALL % "x", [7]), "stream"),
    # a stream that assembles to the whole parse, wrong alike: the whole case names it
    ("textbound.mutants.tools_starts_in_reasoning_ignored", tool_case("stream", "hm</think>Hi", [4], starts_in_reasoning=True),
     "whole"),
])
def test_a_property_leaves_a_bug_to_the_property_that_names_it(module: str, case: Case, left_to: str):
    subject = Subject(FAMILY, family_path(FAMILY), Implementation(module))
    named = Case("tools", left_to, case.family, case.input)
    assert run_check(impl_subject(FAMILY), case) is None and run_check(impl_subject(FAMILY), named) is None
    assert run_check(subject, case) is None
    found = run_check(subject, named)
    assert found is not None and not found.is_oracle_disagreement, found


# the catalogue's tools mutants, and the broken parsers above, bugs it lacks (close_in_string is left
# out: its naive parser reads no reasoning either, a second bug)
ONE_TOOLS_BUG = ["textbound.mutants.tools_arguments_repeated", "textbound.mutants.tools_close_tag_in_string", "textbound.mutants.tools_empty_content",
                 "textbound.mutants.tools_index_from_one", "textbound.mutants.tools_starts_in_reasoning_ignored",
                 "textbound.mutants.tools_tag_split_leaks", *(f"tests.broken_tools_impl.{variant}" for variant in sorted(
                     set(tests.broken_tools_impl.VARIANTS) - {"close_in_string"}))]


def impl_signatures(module: str) -> frozenset[str]:
    """The signatures of every quick tools case on FAMILY, in every format, less oracle disagreements."""
    return frozenset(s for s in component_signatures(module, FAMILY, "tools") if not is_oracle_disagreement(s))


@pytest.mark.parametrize("module", ONE_TOOLS_BUG)
def test_one_tools_bug_gives_one_signature_two_at_most_over_every_format(module):
    """A bug in code all formats share meets every format, and is still one signature: the kind
    does not name the format, and a property leaves to another of the same input what it names."""
    assert not impl_signatures("textbound.impl")
    signatures = impl_signatures(module)
    assert 1 <= len(signatures) <= 2, sorted(signatures)


@pytest.mark.parametrize("one, other", [
    ("textbound.mutants.tools_close_tag_in_string", "textbound.mutants.tools_starts_in_reasoning_ignored"),  # both in whole content
    ("textbound.mutants.tools_tag_split_leaks", "textbound.mutants.tools_index_from_one"),  # both in the stream
    ("textbound.mutants.tools_arguments_repeated", "textbound.mutants.tools_empty_content"),
])
def test_two_tools_bugs_give_signatures_of_their_own(one, other):
    """Each has a signature the other lacks (they may share one: a close tag cut inside a string may
    also pair the tags otherwise and read text as a call, as a prompt's reasoning read as content can)."""
    mine, theirs = impl_signatures(one), impl_signatures(other)
    assert mine - theirs and theirs - mine, (sorted(mine), sorted(theirs))


def round_trip_case(fmt: str, reasoning: str) -> Case:
    call = {"id": "functions.get_weather:0" if fmt == "kimi_k2" else "call000000abc", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    message = {"role": "assistant", "content": "", "tool_calls": [call], "reasoning_content": reasoning}
    return Case("tools", "round_trip", FAMILY, {"format": fmt, "template": ROUND_TRIP_TEMPLATES[fmt][0],
                                                "message": message, "tools": list(TOOLS)})


def part_case(round_trip: Case) -> Case:
    """The whole case of a round trip's assistant part, as tools_cases yields beside it."""
    given = round_trip.input
    part, starts_in_reasoning = assistant_part(given["format"], shared_template(given["template"]), given["message"],
                                               given["tools"])
    return tool_case("whole", part, [], given["format"], starts_in_reasoning=starts_in_reasoning)


@NEEDS_TEMPLATES
@pytest.mark.parametrize("fmt", ["glm45", "kimi_k2", "minimax_m2"])
def test_reasoning_dropped_from_a_rendered_message_is_named_by_the_whole_parse_of_its_part(fmt):
    case = round_trip_case(fmt, "Let me think, then.")
    assert run_check(impl_subject(FAMILY), case) is None
    passed = run_check(impl_subject(FAMILY), part_case(case))  # transformers may read the part's whitespace otherwise
    assert passed is None or passed.first_difference["impl_sides_with"] == "reference", passed
    assert run_check(broken_subject("reasoning_dropped"), case) is None  # left to the whole case of the part
    found = run_check(broken_subject("reasoning_dropped"), part_case(case))
    assert found is not None and found.kind == "reasoning_content differs", found
    assert found.first_difference["format"] == fmt


@NEEDS_TEMPLATES
def test_a_message_the_reference_does_not_read_back_is_an_oracle_disagreement(monkeypatch):
    """impl reading the part as the reference does, the template and the reference disagree."""
    case = round_trip_case("glm45", "Let me think, then.")
    parse = tool_reference.parse

    def reference_dropping_reasoning(*args, **options):
        return SimpleNamespace(message=lambda: {**parse(*args, **options).message(), "reasoning_content": ""})

    monkeypatch.setattr(tool_reference, "parse", reference_dropping_reasoning)
    found = run_check(broken_subject("reasoning_dropped"), case)
    assert found is not None and found.kind == "oracle disagreement: glm45: round trip: reasoning_content differs", found


@NEEDS_TEMPLATES
@pytest.mark.parametrize("fmt", ["deepseek_r1", "llama3_json"])
def test_round_trip_expects_no_reasoning_where_the_template_drops_it(fmt):
    """These templates drop reasoning; "," is in the call's JSON all the same, so it is no sign of it."""
    assert run_check(impl_subject(FAMILY), round_trip_case(fmt, ",")) is None


def _reference_subject(monkeypatch) -> Subject:
    """FAMILY on an implementation whose whole parse is the reference's, in impl's message shape."""
    def parse_response(text, format="hermes", **options):
        message = tool_reference.parse(text, format, **options).message()
        content = message["content"] or (None if message["calls"] else "")
        return {"role": "assistant", "content": content, "reasoning_content": message["reasoning_content"],
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
                    "name": call["name"], "arguments": json.dumps(call["arguments"])}}
                    for i, call in enumerate(message["calls"])]}
    return module_subject(monkeypatch, "reference_parse", parse_response=parse_response)


def test_oracle_disagreements_are_recorded_apart(monkeypatch):
    # transformers' glm45 template keeps the whitespace after a call's name; the reference strips it.
    text = "<tool_call>f </tool_call>"
    case = tool_case("whole", text, [], fmt="glm45")
    answer = transformers_response.parse(text, "glm45")
    assert answer.message is not None and message_difference(tool_reference.parse(text, "glm45").message(), answer.message)
    found = run_check(_reference_subject(monkeypatch), case)
    assert found.kind.startswith("oracle disagreement: glm45") and found.first_difference["impl_sides_with"] == "reference"
    assert found.first_difference["transformers_limits"]


def test_malformed_output_is_the_references_alone(monkeypatch):
    # transformers reads what an unterminated region holds; the reference makes the broken block content.
    text = "<tool_call>f<"
    assert not well_formed(tool_reference.parse(text, "glm45"))
    assert transformers_response.parse(text, "glm45").message["calls"]
    assert run_check(_reference_subject(monkeypatch), tool_case("whole", text, [], fmt="glm45")) is None


def test_reference_implementation_passes_the_whole_check(monkeypatch):
    subject = _reference_subject(monkeypatch)
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


def test_a_reasoning_flag_read_otherwise_names_the_whole_parse_whatever_part_differs_first():
    """A parser ignoring starts_in_reasoning (reasoning lands in content, a call after it too): one
    kind, whichever part of the message shows it first."""
    from textbound.checks.tools import ToolInput, flag_reading, message_of

    mutant = Implementation("textbound.mutants.tools_starts_in_reasoning_ignored")
    for text in ("thinking</think>hello", "plan</think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"):
        given = ToolInput("hermes", text, None, True, True, [])
        actual = message_of(mutant.parse_response(text, "hermes", **given.options))
        assert flag_reading(given, actual) == "parses as if starts_in_reasoning were false"
        assert flag_reading(given, message_of(impl.parse_response(text, "hermes", **given.options))) is None


def test_a_call_read_into_reasoning_is_named_by_the_part_that_took_it():
    from textbound.checks.tools import read_otherwise

    call = {"name": "f", "arguments": {}}
    expected = {"content": "a", "reasoning_content": "r", "calls": [call]}
    actual = {"content": "", "reasoning_content": "r</think>a<tool_call>...</tool_call>", "calls": []}
    assert read_otherwise(expected, actual, {"field": "content"}) == "reasoning_content differs: a call read as reasoning"
    assert read_otherwise({**expected, "content": ""}, {**actual, "reasoning_content": "r", "content": "<tool_call>"},
                          {"field": "content"}) == "content differs: a call read as content"
