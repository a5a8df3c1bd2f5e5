"""impl's tool-call and reasoning parsing (impl.tools), whole and streamed, for every format.

- Round trip: an assistant message with tool calls and reasoning, rendered by the model's own chat
  template (transformers' renderer is the oracle), parses back to the same calls (names, arguments as
  JSON values), reasoning and content.
- Split invariance, brute force: for every split of sample outputs into two deltas, and fed one
  character at a time, the assembled stream equals the whole parse; the deltas keep OpenAI's rules.
- Arguments stream: a long call written in each format, fed 4 characters at a time, is announced
  before its arguments end and its arguments arrive in many deltas that add up, byte for byte, to
  what was written (JSON formats) and to the whole parse; truncated anywhere and split anywhere,
  the stream still equals the whole parse. The closable-prefix reader (json_prefix) against
  json.loads on generated JSON.
- Minimal hold-back: content that may be the start of a tag is held, and released once it cannot be.
- Malformed output is never dropped and never raises; calls announced before it broke are closed
  into valid JSON and flagged.
- A parser that releases text without holding back, and one that repeats argument text, are caught.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.impl.tools import (FORMATS, MALFORMED_CALL, OutputParser, assemble, format_for_template, parse_response,
                        parse_tool_calls)
from textbound.impl.tools.json_prefix import JsonPrefix
from textbound.oracles.chat_oracle import TEMPLATES_ENV

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "opts": {"type": "object"}}}}},
    {"type": "function", "function": {"name": "get_time", "description": "Time.",
                                      "parameters": {"type": "object", "properties": {}}}},
]
# Arguments with quotes, an open tag, non-ASCII, a number and a nested object. (A close tag would end
# the block in the formats whose close tags are special tokens or whose values are text.)
WEATHER_ARGUMENTS = {"city": 'Pa"ris<tool_call> é', "days": 3, "opts": {"a": [1, 2]}}
REASONING, CONTENT = "thinking here", "Sure."
# Where a rendered assistant turn ends (the end-of-turn tokens of the templates below).
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "</s>", "<｜end▁of▁sentence｜>", "[e~[")

# (template file, format, call ids the template accepts, parallel calls, marker before the assistant turn
# when the template renders the prompt differently once an assistant message follows)
ROUND_TRIPS = [
    ("vllm_hermes.jinja", "hermes", None, True, None),
    ("qwen2.5-instruct.jinja", "hermes", None, True, None),
    ("vllm_qwen3coder.jinja", "qwen3_coder", None, True, None),
    ("vllm_llama3.1_json.jinja", "llama3_json", None, False, None),
    ("vllm_llama3.2_json.jinja", "llama3_json", None, False, None),
    ("vllm_mistral3.jinja", "mistral", ("abcDEF012", "abcDEF013"), True, None),
    ("llamacpp_mistral_small_3_1.jinja", "mistral", ("abcDEF012", "abcDEF013"), True, None),
    ("vllm_deepseekv3.jinja", "deepseek_r1", None, True, "<｜Assistant｜>"),
    ("vllm_deepseekr1.jinja", "deepseek_r1", None, True, None),
    ("vllm_deepseekv31.jinja", "deepseek_v31", None, True, "<｜Assistant｜></think>"),
    ("llamacpp_kimi_k2_thinking.jinja", "kimi_k2", ("functions.get_weather:0", "functions.get_time:1"), True, None),
    ("llamacpp_glm_4_6.jinja", "glm45", None, True, None),
    ("llamacpp_minimax_m2.jinja", "minimax_m2", None, True, None),
]


def _templates_dir() -> Path:
    folder = os.environ.get(TEMPLATES_ENV)
    if not folder:
        pytest.skip(f"{TEMPLATES_ENV} is not set: no chat templates to render with")
    return Path(folder)


def _rendered_turn(template: str, calls: list[dict], marker: str | None) -> tuple[str, str]:
    """(the prompt before the assistant turn, the assistant turn) as the template renders them."""
    from transformers.utils.chat_template_utils import render_jinja_template

    user = [{"role": "user", "content": "hi"}]
    assistant = {"role": "assistant", "content": CONTENT, "reasoning_content": REASONING, "tool_calls": calls}
    options = {"tools": TOOLS, "chat_template": template, "bos_token": "<s>", "eos_token": "</s>"}
    prompt = render_jinja_template([user], add_generation_prompt=True, **options)[0][0]
    whole = render_jinja_template([user + [assistant]], **options)[0][0]
    if marker is None:
        assert whole.startswith(prompt), "the assistant turn does not extend the generation prompt"
        turn = whole[len(prompt):]
    else:
        prompt, turn = whole[:whole.rindex(marker) + len(marker)], whole[whole.rindex(marker) + len(marker):]
    ends = [turn.index(end) for end in END_OF_TURN if end in turn]
    return prompt, turn[:min(ends)] if ends else turn


@pytest.mark.parametrize("file, fmt, ids, parallel, marker", ROUND_TRIPS, ids=[case[0] for case in ROUND_TRIPS])
def test_round_trip_through_the_models_template(file, fmt, ids, parallel, marker):
    template = (_templates_dir() / file).read_text()
    ids = ids or ("call_0", "call_1")
    calls = [{"id": ids[0], "type": "function", "function": {"name": "get_weather", "arguments": WEATHER_ARGUMENTS}},
             {"id": ids[1], "type": "function", "function": {"name": "get_time", "arguments": {}}}]
    calls = calls if parallel else calls[:1]
    prompt, turn = _rendered_turn(template, calls, marker)
    starts_in_reasoning = prompt.rstrip().endswith(("<think>", "[THINK]"))

    message = parse_response(turn, fmt, tools=TOOLS, starts_in_reasoning=starts_in_reasoning)

    assert format_for_template(template) == fmt
    parsed = [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in message["tool_calls"]]
    assert parsed == [(call["function"]["name"], call["function"]["arguments"]) for call in calls]
    if fmt in ("kimi_k2", "mistral"):  # formats that carry their own ids
        assert [call["id"] for call in message["tool_calls"]] == [call["id"] for call in calls]
    assert all("error" not in call for call in message["tool_calls"])
    rendered_reasoning = REASONING in turn
    assert (message["reasoning_content"] or "").strip() == (REASONING if rendered_reasoning else "")
    # Content keeps the template's whitespace (line breaks between calls): only its text must come back.
    assert (message["content"] or "").strip() == (CONTENT if CONTENT in turn else "")


# Sample outputs per format: well-formed, with the hard cases (tags in strings, parallel calls, a call
# without arguments, whitespace between calls).
SAMPLES = {
    "hermes": ['<think>hm <tool_call></think>\n\nHi <tool_call>\n{"name": "get_weather", "arguments": '
               '{"city": "</tool_call>"}}\n</tool_call>\n<tool_call>{"name": "get_time"}</tool_call>',
               # escapes that a split may cut in half, before a bracket and a close tag inside the string
               '<tool_call>{"name": "get_weather", "arguments": {"city": "x\\\\\\"]}\\n</tool_call>"}}</tool_call>'],
    "qwen3_coder": ["Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar<tool_call>is\n</parameter>\n"
                    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n"
                    "</function>\n</tool_call>"],
    "llama3_json": [' {"name": "get_weather", "parameters": {"city": "a;}"}}; {"name": "get_time", "parameters": {}}',
                    'Hi <|python_tag|>{"name": "get_time", "arguments": {}}'],
    "mistral": ['[THINK]r[/THINK]Sure.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "]"}, '
                '"id": "abcDEF012"}]',
                '[TOOL_CALLS]get_weather[ARGS]{"city": "x"}[TOOL_CALLS]get_time[CALL_ID]abc123XYZ[ARGS]{}'],
    "deepseek_r1": ['<think>r</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n'
                    '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>'
                    'get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'],
    "deepseek_v31": ['Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "P"}'
                     '<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'],
    "gpt_oss": ['<|channel|>analysis<|message|>Look.<|end|><|start|>assistant<|channel|>commentary '
                'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
                '<|channel|>analysis<|message|>E.<|end|>\n<|start|>assistant<|channel|>final<|message|>Hi!<|return|>'],
    "kimi_k2": ['<think>r</think>Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1'
                '<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>'],
    "glm45": ["<think>r</think>\nSure.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Pa<tool_call>ris"
              "</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n"
              "</tool_call>"],
    "minimax_m2": ['<think>r</think>\n\nSure.\n<minimax:tool_call>\n<invoke name="get_weather">\n'
                   '<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n'
                   '<invoke name="get_time">\n</invoke>\n</minimax:tool_call>'],
}
# Text that never appears in a well-formed sample's content or reasoning: pieces of the formats' syntax.
SYNTAX = ("<tool_call", "</tool_call", "<think", "</think", "<function=", "<parameter", "<arg_", "<invoke",
          "minimax:", "<|", "<｜", "[TOOL_CALLS", "[THINK", "[/THINK", "[ARGS", "[CALL_ID")


def test_samples_cover_every_format():
    assert set(SAMPLES) == set(FORMATS)


def _streamed(text: str, fmt: str, pieces: list[str], **options) -> list[dict]:
    parser = OutputParser(fmt, **options)
    deltas = [delta for piece in pieces for delta in parser.feed(piece)]
    return deltas + parser.feed("", final=True)


def split_divergence(text: str, fmt: str, **options) -> tuple[int, dict, dict] | None:
    """The first split point whose assembled stream differs from the whole parse, else None."""
    whole = parse_response(text, fmt, **options)
    for cut in range(len(text) + 1):
        streamed = assemble(_streamed(text, fmt, [text[:cut], text[cut:]], **options))
        if streamed != whole:
            return cut, whole, streamed
    return None


def delta_violations(deltas: list[dict]) -> list[str]:
    """Breaches of the streaming rules: indexes from 0 by one, id/type/name once in a call's first
    delta, the name whole there, no syntax in content or reasoning."""
    problems, seen = [], set()
    for delta in deltas:
        for key in ("content", "reasoning_content"):
            problems += [f"{fragment!r} in {key}" for fragment in SYNTAX if fragment in delta.get(key, "")]
        for call in delta.get("tool_calls", ()):
            first = call["index"] not in seen
            if first and call["index"] != len(seen):
                problems.append(f"index {call['index']} after {len(seen)} calls")
            seen.add(call["index"])
            announces = {"id", "type"} & set(call) or "name" in call.get("function", {})
            if first and not (call.get("id") and call.get("type") == "function" and call["function"].get("name")):
                problems.append(f"call {call['index']}'s first delta lacks id, type or name")
            if not first and announces:
                problems.append(f"call {call['index']} repeats its id, type or name")
    return problems


@pytest.mark.parametrize("fmt, text", [(fmt, text) for fmt, texts in SAMPLES.items() for text in texts])
def test_every_split_assembles_to_the_whole_parse(fmt, text):
    options = {"tools": TOOLS}
    assert split_divergence(text, fmt, **options) is None
    whole = parse_response(text, fmt, **options)
    char_by_char = _streamed(text, fmt, list(text), **options)
    assert assemble(char_by_char) == whole
    assert delta_violations(char_by_char) == []
    calls = whole.get("tool_calls", [])
    assert all(isinstance(json.loads(call["function"]["arguments"]), dict) for call in calls)
    assert [call for call in calls if "error" in call] == []


KIMI_SECTION = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}'
                '<|tool_call_end|><|tool_calls_section_end|>')
# Forms the servers read that transformers' templates do not (each module cites the server): (format, text,
# content, call names). impl must read them so whole and split, and the reference must agree.
SERVER_FORMS = [
    ("hermes", '```xml\n<response>\n{"name": "f", "arguments": {"a": 1}}\n</response>\n```', "", ["f"]),
    ("hermes", 'Sure:\n```\n  {"name": "f", "arguments": {}}\n```', "Sure:\n", ["f"]),
    ("hermes", '```json\n<function_call> {"name": "f", "arguments": {}} </function_call>\n``` ', "", ["f"]),
    ("hermes", '<JSON>{"name": "f", "arguments": {}}</JSON>x', "x", ["f"]),
    ("hermes", 'A {"name": "f", "arguments": {"b": [1]}} B', "A  B", ["f"]),
    ("hermes", 'Data: {"name": "Bob", "age": 3}', 'Data: {"name": "Bob", "age": 3}', []),  # no "arguments"
    ("hermes", "```python\nprint({})\n```\n<response>Hi</response>", "```python\nprint({})\n```\n<response>Hi</response>", []),
    ("gpt_oss", ' to=functions.f<|channel|>commentary <|constrain|>json<|message|>{"a": 1}', "", ["f"]),
    ("gpt_oss", " tomorrow", " tomorrow", []),
    ("llama3_json", '{"name": "f"}', '{"name": "f"}', []),
    ("glm45", "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>30</arg_value>\n</tool_call>", "", ["f"]),
    # kimi_k2: reasoning never closed ends at a tool-calls section (closed later, the section is reasoning text).
    ("kimi_k2", "<think>hm" + KIMI_SECTION, "", ["f"]),
    ("kimi_k2", "<think>hm" + KIMI_SECTION + "</think>ok", "ok", []),
    ("hermes", '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>', "", ["f"]),  # stringified
    ("hermes", '<tool_call>{"name": "f", "arguments": "hello"}</tool_call>',
     '<tool_call>{"name": "f", "arguments": "hello"}</tool_call>', []),
    ("qwen3_coder", "Hi <function=f>\n<parameter=a>\n1\n</parameter>\n</function>", "Hi ", ["f"]),
    ("qwen3_coder", "use <function=\nx", "use <function=\nx", []),
]


@pytest.mark.parametrize("fmt, text, content, names", SERVER_FORMS)
def test_forms_the_servers_read(fmt, text, content, names):
    from textbound.oracles import tool_reference
    whole = parse_response(text, fmt)
    assert ((whole["content"] or ""), [call["function"]["name"] for call in whole.get("tool_calls", [])]) == (content, names)
    assert split_divergence(text, fmt) is None
    reference = tool_reference.parse(text, fmt).message()
    assert (reference["content"], [call["name"] for call in reference["calls"]]) == (content, names)
    if fmt == "glm45":  # a value no schema types is the JSON it holds (both servers)
        assert json.loads(whole["tool_calls"][0]["function"]["arguments"]) == {"n": 30}
    if names and fmt == "hermes" and "\\" in text:
        assert json.loads(whole["tool_calls"][0]["function"]["arguments"]) == {"a": 1}


def test_object_parameters_written_as_python_literals():
    # vLLM's and mlx-lm's qwen3_coder parsers read them; a string parameter stays the text.
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "o": {"type": "object"}, "s": {"type": "string"}, "t": {"type": "array"}}}}}]
    text = "<tool_call><function=f><parameter=o>{'a': True, 'b': None}</parameter><parameter=s>{'a': 1}</parameter>" \
           "<parameter=t>(1, 2)</parameter></function></tool_call>"
    arguments = json.loads(parse_response(text, "qwen3_coder", tools=tools)["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"o": {"a": True, "b": None}, "s": "{'a': 1}", "t": "(1, 2)"}


def test_a_call_without_arguments_gives_an_empty_object():
    harmony = "<|channel|>commentary to=functions.get_time<|message|>{}<|call|>"
    for fmt, texts in {**SAMPLES, "gpt_oss": [harmony]}.items():
        calls = [call for text in texts for call in parse_response(text, fmt).get("tool_calls", ())]
        no_arguments = [call["function"]["arguments"] for call in calls if call["function"]["name"] == "get_time"]
        assert no_arguments and set(no_arguments) == {"{}"}, fmt


# One tag that may begin in content, per format, to check minimal hold-back with.
CONTENT_TAG = {"hermes": "<tool_call>", "qwen3_coder": "<tool_call>", "llama3_json": "<|python_tag|>",
               "mistral": "[TOOL_CALLS]", "deepseek_r1": "<｜tool▁call▁begin｜>", "deepseek_v31": "<｜tool▁calls▁begin｜>",
               "gpt_oss": "<|channel|>", "kimi_k2": "<|tool_calls_section_begin|>", "glm45": "<tool_call>",
               "minimax_m2": "<minimax:tool_call>"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_content_is_held_only_while_it_may_be_a_tag(fmt):
    tag = CONTENT_TAG[fmt]
    # glm45 also holds the whitespace that ends content while a call may follow it (blank_runs.py: edge).
    before = "Hi" if fmt == "glm45" else "Hi "
    for length in range(1, len(tag)):
        parser = OutputParser(fmt)
        assert assemble(parser.feed("Hi " + tag[:length]))["content"] == before, (fmt, tag[:length])
        assert assemble(parser.feed("~"))["content"] == "Hi "[len(before):] + tag[:length] + "~", (fmt, tag[:length])


def test_llama3_json_reads_a_call_after_text_where_name_follows_the_brace():
    # vLLM finds calls after text; a brace "name" does not follow, or an object that is not a call, is text.
    text = 'Here {x} {"name": "g"} {"name": "f", "parameters": {"a": 1}}; {"name": "h", "parameters": {}} ok'
    message = parse_response(text, "llama3_json")
    assert message["content"] == 'Here {x} {"name": "g"}  ok'
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [("f", '{"a": 1}'), ("h", "{}")]
    parser = OutputParser("llama3_json")
    assert assemble([d for ch in text for d in parser.feed(ch)] + parser.feed("", final=True)) == message


def test_gpt_oss_drops_text_after_a_stop_token_up_to_the_next_message():
    # <|call|> and <|return|> end the turn; text after <|end|> stays content.
    call = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"
    final = "<|start|>assistant<|channel|>final<|message|>Hi<|end|>"
    message = parse_response(call + "stray" + final + " kept", "gpt_oss")
    assert (message["content"], message["tool_calls"][0]["function"]["name"]) == ("Hi kept", "f")
    assert parse_response(call + "stray", "gpt_oss").get("content") is None


def test_glm45_trims_whitespace_beside_calls_and_reasoning():
    # Both of glm45's servers trim it (vLLM's glm4_moe parser, llama.cpp's GLM-4.6 tests); others keep it.
    text = "<think>hm</think>\n Sure. \n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\nBye \n"
    message = parse_response(text, "glm45")
    assert (message["content"], message["tool_calls"][0]["function"]["arguments"]) == ("Sure.Bye \n", '{"a": 1}')
    parser = OutputParser("glm45")
    assert assemble(parser.feed(text[:30]) + parser.feed(text[30:], final=True))["content"] == "Sure.Bye \n"
    assert parse_response('Sure. \n<tool_call>{"name": "f"}</tool_call>', "hermes")["content"] == "Sure. \n"


def test_reasoning_is_released_as_it_arrives():
    parser = OutputParser("hermes")
    assert parser.feed("<think>a</thi") == [{"reasoning_content": "a"}]
    assert parser.feed("s") == [{"reasoning_content": "</this"}]
    assert OutputParser("minimax_m2", starts_in_reasoning=True).feed("r") == [{"reasoning_content": "r"}]
    assert parse_response("<think>a</think>b", "hermes", reasoning=False)["content"] == "<think>a</think>b"


# Malformed outputs, and the text each must give back as content (never dropped, never an exception).
MALFORMED = [
    ("hermes", '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>'),  # invalid JSON
    ("hermes", '<tool_call>{"arguments": {}}</tool_call>'),  # no name
    ("hermes", '<tool_call>{"name": "f", "arguments": {"a": "x'),  # unterminated at the end
    ("hermes", '<tool_call><tool_call>{"name": "f"}</tool_call>'),  # nested
    ("hermes", '<tool_call>{"name": "f", "arguments": 3}</tool_call>'),  # arguments not an object
    ("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>"),
    ("llama3_json", '{"answer": 42}'),
    ("llama3_json", "<|python_tag|>brave_search.call(query='x')"),
    ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {}'),
    ("mistral", "[TOOL_CALLS] I cannot call tools."),
    ("deepseek_r1", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{oops}\n```<｜tool▁call▁end｜>"),
    ("deepseek_v31", "<｜tool▁call▁begin｜>f<｜tool▁sep｜>[1, 2]<｜tool▁call▁end｜>"),
    ("gpt_oss", "<|channel|>commentary to=functions.f<|message|>{not json}<|call|>"),
    ("gpt_oss", "<|start|>assistant to=functions.f"),
    ("kimi_k2", "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>[1]<|tool_call_end|>"),
    # the first close tag ends the block, inside a string: what may be that tag is not streamed early
    ("kimi_k2", '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": "x<|tool_call_end|>"}<|tool_call_end|>'),
    ("glm45", "<tool_call>f\n<arg_key>a</arg_key>\n</tool_call>"),
    ("minimax_m2", '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1\n</invoke>\n</minimax:tool_call>'),
]


def _malformed_calls_are_flagged_objects(message: dict) -> bool:
    """Whether every call in ``message`` is one announced before its block broke: flagged, and its
    arguments closed into a JSON object."""
    return all(call.get("error", "").startswith(MALFORMED_CALL) and isinstance(json.loads(call["function"]["arguments"]), dict)
               for call in message.get("tool_calls", ()))


@pytest.mark.parametrize("fmt, text", MALFORMED)
def test_malformed_output_comes_back_as_content(fmt, text):
    message = parse_response("Hi " + text, fmt)
    assert message["content"] == "Hi " + text
    assert _malformed_calls_are_flagged_objects(message)
    assert split_divergence("Hi " + text, fmt) is None


def test_a_call_announced_before_it_broke_is_closed_and_flagged():
    text = 'Hi <tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    deltas = _streamed(text, "hermes", [text])
    message = assemble(deltas)
    assert message["content"] == text
    (call,) = message["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Par"}'}
    assert call["error"] == f"{MALFORMED_CALL}: its block is content"
    # A key repeated after the announcement: the announced call is flagged, the complete one follows.
    text = '<tool_call>{"name": "f", "arguments": {"a": 1}, "name": "g"}</tool_call>'
    calls = parse_response(text)["tool_calls"]
    assert [(c["function"]["name"], c.get("error", "")[:len(MALFORMED_CALL)]) for c in calls] == [
        ("f", MALFORMED_CALL), ("g", "")]
    assert split_divergence(text, "hermes") is None


def test_unknown_tools_are_flagged_not_dropped():
    text = '<tool_call>{"name": "launch", "arguments": {}}</tool_call>'
    (call,) = parse_response(text, tools=TOOLS)["tool_calls"]
    assert call["function"]["name"] == "launch" and call["error"] == "unknown tool 'launch'"
    assert "error" not in parse_response(text)["tool_calls"][0]  # no tools list: nothing to check against


def test_a_call_inside_reasoning_stays_reasoning():
    text = '<think>try <tool_call>{"name": "f"}</tool_call></think>ok'
    message = parse_response(text)
    assert message["reasoning_content"] == 'try <tool_call>{"name": "f"}</tool_call>'
    assert message["content"] == "ok" and "tool_calls" not in message


PAYLOAD = ("Sure", "Paris", "Look", "Hi", "get_weather", "get_time", "city", "days")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_parses_without_raising_or_losing_text(fmt):
    for text in SAMPLES[fmt]:
        for cut in range(len(text) + 1):
            message = parse_response(text[:cut], fmt)
            kept = (message["content"] or "") + (message["reasoning_content"] or "")
            for call in message.get("tool_calls", ()):
                kept += call["function"]["name"] + call["function"]["arguments"]
            # Nothing is dropped: every payload word the truncated text holds survives somewhere.
            words = [word for word in PAYLOAD if word in text[:cut]]
            assert all(word in kept for word in words), (fmt, cut, message)


def test_parse_tool_calls_is_content_and_calls():
    content, calls = parse_tool_calls('Hi<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert content == "Hi" and [call["function"]["name"] for call in calls] == ["f"]
    assert parse_tool_calls("plain") == ("plain", [])


def test_message_shape_follows_openai():
    assert parse_response("") == {"role": "assistant", "content": "", "reasoning_content": None}
    only_calls = parse_response('<tool_call>{"name": "f"}</tool_call>')
    assert only_calls["content"] is None and only_calls["tool_calls"][0]["type"] == "function"


def test_bad_arguments_to_the_api_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown tool-call format 'nope'"):
        OutputParser("nope")
    with pytest.raises(TypeError, match="feed\\(\\) takes str"):
        OutputParser().feed(b"x")
    parser = OutputParser()
    parser.feed("x", final=True)
    with pytest.raises(RuntimeError, match="after the stream was finished"):
        parser.feed("y")


def test_format_for_template_knows_templates_without_tool_calls():
    assert format_for_template("{% for m in messages %}{{ m.content }}{% endfor %}") is None


def test_a_parser_that_does_not_hold_back_is_caught(monkeypatch):
    import textbound.impl.tools.engine as engine

    def eager_next_tag(text, tags, final):  # releases every character at once
        position = min((text.find(tag) for tag in tags if tag in text), default=-1)
        if position < 0:
            return text, None, ""
        tag = next(tag for tag in tags if text.startswith(tag, position))
        return text[:position], tag, text[position + len(tag):]

    monkeypatch.setattr(engine, "next_tag", eager_next_tag)
    assert split_divergence(SAMPLES["hermes"][0], "hermes") is not None


# A long call, written in each format the way its template writes it, to watch its arguments stream.
# (The long value last: XML formats pass a parameter on when it closes.)
LONG_ARGUMENTS = {"days": 3, "opts": {"a": [1, 2.5, True, None], "s": "x\\y"}, "city": 'Pa"ris é <b> \\ ' * 120}


def _xml_value(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def written_call(fmt: str, name: str, arguments: dict) -> tuple[str, str]:
    """(the output text of one call in ``fmt``, its arguments' JSON text as written there)."""
    text = json.dumps(arguments, ensure_ascii=False)
    pairs = arguments.items()
    writers = {
        "hermes": lambda: f'<tool_call>\n{{"name": "{name}", "arguments": {text}}}\n</tool_call>',
        "qwen3_coder": lambda: f"<tool_call>\n<function={name}>\n" + "".join(
            f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in pairs) + "</function>\n</tool_call>",
        "llama3_json": lambda: f'<|python_tag|>{{"name": "{name}", "parameters": {text}}}',
        "mistral": lambda: f"[TOOL_CALLS]{name}[ARGS]{text}",
        "deepseek_r1": lambda: f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{text}\n```"
                               "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "deepseek_v31": lambda: f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{text}<｜tool▁call▁end｜>"
                                "<｜tool▁calls▁end｜>",
        "gpt_oss": lambda: f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                           f"{text}<|call|>",
        "kimi_k2": lambda: f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>"
                           f"{text}<|tool_call_end|><|tool_calls_section_end|>",
        "glm45": lambda: f"<tool_call>{name}\n" + "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{_xml_value(v)}</arg_value>\n" for k, v in pairs) + "</tool_call>",
        "minimax_m2": lambda: f'<minimax:tool_call>\n<invoke name="{name}">\n' + "".join(
            f'<parameter name="{k}">{_xml_value(v)}</parameter>\n' for k, v in pairs) + "</invoke>\n</minimax:tool_call>",
    }
    return writers[fmt](), text


def argument_stream_problems(fmt: str, text: str, written: str, piece: int = 4) -> list[str]:
    """What is wrong with how one call's arguments stream when ``text`` is fed ``piece`` characters
    at a time: announced late, arguments in fewer than three deltas or none before the arguments
    were all written, or a concatenation that is not the whole parse's (nor, in JSON formats, the
    text as written)."""
    parser, pieces, fed = OutputParser(fmt, tools=TOOLS), [], 0
    announced_at = first_arguments_at = None
    for start in range(0, len(text), piece):
        for delta in parser.feed(text[start:start + piece]):
            for call in delta.get("tool_calls", ()):
                announced_at = fed if announced_at is None else announced_at
                if call["function"].get("arguments"):
                    pieces.append(call["function"]["arguments"])
                    first_arguments_at = fed if first_arguments_at is None else first_arguments_at
        fed = start + piece
    for delta in parser.feed("", final=True):
        pieces += [call["function"].get("arguments", "") for call in delta.get("tool_calls", ())]
    problems = []
    arguments_end = text.index(written) + len(written) if written in text else len(text)
    if announced_at is None or announced_at > len(text) // 4:
        problems.append(f"announced only after {announced_at} of {len(text)} characters")
    if len(pieces) < 3 or first_arguments_at is None or first_arguments_at > arguments_end // 2:
        problems.append(f"arguments in {len(pieces)} deltas, the first after {first_arguments_at} characters")
    (whole,) = parse_response(text, fmt, tools=TOOLS)["tool_calls"]
    if "".join(pieces) != whole["function"]["arguments"]:
        problems.append("the streamed arguments are not the whole parse's")
    if fmt in JSON_ARGUMENT_FORMATS and "".join(pieces) != written:
        problems.append("the streamed arguments are not the text as written")
    return problems


JSON_ARGUMENT_FORMATS = ("hermes", "llama3_json", "mistral", "deepseek_r1", "deepseek_v31", "gpt_oss", "kimi_k2")


@pytest.mark.parametrize("fmt", FORMATS)
def test_arguments_stream_as_they_arrive(fmt):
    text, written = written_call(fmt, "get_weather", LONG_ARGUMENTS)
    assert argument_stream_problems(fmt, text, written) == []
    message = parse_response(text, fmt, tools=TOOLS)
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == LONG_ARGUMENTS
    assert "error" not in message["tool_calls"][0]


def test_a_parser_that_repeats_argument_text_is_caught(monkeypatch):
    from textbound.impl.tools.message import DeltaSink

    original = DeltaSink.arguments

    def twice(self, index, text, error=None):  # each piece of arguments sent in two deltas
        original(self, index, text)
        original(self, index, text, error)

    monkeypatch.setattr(DeltaSink, "arguments", twice)
    text, written = written_call("hermes", "get_weather", LONG_ARGUMENTS)
    assert "the streamed arguments are not the text as written" in argument_stream_problems("hermes", text, written)


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_anywhere_and_split_anywhere_the_stream_is_the_whole_parse(fmt):
    text, _ = written_call(fmt, "get_weather", {"city": "Pa ris", "days": 3, "opts": {"a": [1]}})
    text = "Sure. " + text
    for cut in range(len(text) + 1):
        truncated = text[:cut]
        whole = parse_response(truncated, fmt, tools=TOOLS)
        # A truncated block is content (its announced calls flagged), or reads as calls, perhaps of a
        # truncated name that is no listed tool (flagged unknown).
        errors = [call.get("error", "") for call in whole.get("tool_calls", ())]
        assert _malformed_calls_are_flagged_objects(whole) or all(
            not error or error.startswith("unknown tool") for error in errors), (fmt, cut)
        for split in range(0, cut + 1, 7):
            streamed = assemble(_streamed(truncated, fmt, [truncated[:split], truncated[split:]], tools=TOOLS))
            assert streamed == whole, (fmt, cut, split)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from('"\\</>{}[]'), max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(value=st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=4), ascii_only=st.booleans(),
       indent=st.sampled_from([None, 1]), data=st.data())
def test_every_closable_prefix_closes_into_valid_json(value, ascii_only, indent, data):
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    if data.draw(st.booleans(), label="broken"):  # one character replaced by a piece of syntax
        at = data.draw(st.integers(0, len(text) - 1), label="at")
        text = text[:at] + data.draw(st.sampled_from('x"\\,:}] .e-1'), label="by") + text[at + 1:]
    for cut in range(len(text) + 1):
        whole = JsonPrefix(0)
        whole.run(text[:cut])
        if whole.closable:
            closed = text[:whole.closable] + whole.closers()
            json.loads(closed)  # valid JSON
        split = data.draw(st.integers(0, cut), label="split") if cut == len(text) else cut // 2
        pieces = JsonPrefix(0)
        pieces.run(text[:split])
        pieces.run(text[:cut])
        assert (pieces.closable, pieces.closers()) == (whole.closable, whole.closers())
    ends = JsonPrefix(0).run(text)
    try:
        json.loads(text)
    except ValueError:
        return
    assert ends == len(text)  # a whole valid object is read to its end
