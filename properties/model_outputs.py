"""Hypothesis strategies for model outputs in each tool-call format: a planned message (reasoning,
content, calls of listed and unknown tools) written the way the model writes it, then, often,
malformed: cut short anywhere, a character dropped or added (JSON broken at every point), a stray or
repeated tag put anywhere. Strings are full of the format's tags, quotes, escapes and non-ASCII.

    model_outputs("hermes")  -> {"format": "hermes", "text": "<think>…</think>Hi<tool_call>{…}</tool_call>",
                                 "tools": [...] or None, "reasoning": True, "starts_in_reasoning": False}
    assistant_messages("glm45") -> an assistant message with tool calls (and reasoning) for round trips
    hard_outputs("hermes")      -> fixed outputs with every tag inside string arguments, checked every run

The writers here are the input side only; what the text means is oracles.tool_reference's business.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from textbound.corpora import server_parser_tests
from textbound.oracles.tool_reference import tags

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                     "metric": {"type": "boolean"}}, "required": ["city"]}}}
SEARCH = {"type": "function", "function": {"name": "search", "description": "Search the web", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "number"},
                                     "filters": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}
NOOP = {"type": "function", "function": {"name": "noop", "description": "Does nothing",
                                         "parameters": {"type": "object", "properties": {}}}}
TOOLS = (WEATHER, SEARCH, NOOP)
UNKNOWN_TOOL = "launch_rockets"
TOOL_NAMES = [tool["function"]["name"] for tool in TOOLS]
WORDS = ("Paris", "the weather", "I will call a tool.", "ok", "Let me think", "naïve café", "東京", "Ωμέγα", "😀🏽",
         "line\nbreak", "tab\there", "  spaced  ", "{", "}", "[", "]", ":", ",", '"', "'", "\\", '\\"', "\\n",
         "\\u00e9", "<", ">", "</", "|", "```", ";", "=", "\u2028", "\x00")
# The harmony header of a call, with the recipient after or before the channel.
HARMONY_CALL_HEADERS = ("<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>",
                        "<|channel|>commentary to=functions.{name} json<|message|>",
                        " to=functions.{name}<|channel|>commentary json<|message|>")


# Picks one of the ways a model may write something (drawn by Hypothesis, or fixed for hard cases).
Choose = Callable[[Sequence], object]


def tricky_text(format: str, max_parts: int = 6) -> st.SearchStrategy[str]:
    """Text made of words, punctuation that JSON and XML care about, non-ASCII, and the format's tags."""
    part = st.one_of(st.sampled_from(WORDS), st.sampled_from(tags(format)), st.text(max_size=4))
    return st.lists(part, max_size=max_parts).map("".join)


def plain_text(max_size: int = 12) -> st.SearchStrategy[str]:
    """Text a template writes back unchanged: no leading or trailing whitespace, no tags."""
    words = st.sampled_from([w for w in WORDS if w.strip() == w and not set(w) & set("<>[]|`")])
    return st.lists(words, min_size=1, max_size=3).map(" ".join).filter(lambda text: len(text) <= max_size * 4)


def argument_value(schema: dict, strings: st.SearchStrategy[str]) -> st.SearchStrategy:
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    return {
        "string": strings, "integer": st.integers(-10**6, 10**6), "boolean": st.booleans(),
        "number": st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)),
        "object": st.dictionaries(st.sampled_from(["a", "b", "ключ"]), st.one_of(st.integers(), strings), max_size=2),
        "array": st.lists(strings, max_size=3), "null": st.none(),
    }[kind]


@st.composite
def tool_call(draw, strings: st.SearchStrategy[str], unknown: bool = True) -> tuple[str, dict]:
    """(name, arguments): a listed tool with arguments of its schema's types (some left out), or an unknown one."""
    if unknown and draw(st.integers(0, 9)) == 0:
        return UNKNOWN_TOOL, draw(st.dictionaries(st.sampled_from(["x", "y"]), strings, max_size=2))
    tool = draw(st.sampled_from(TOOLS))["function"]
    properties = tool["parameters"]["properties"]
    chosen = draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
    return tool["name"], {key: draw(argument_value(properties[key], strings)) for key in chosen}


def _json(value: object, choose: Choose) -> str:
    return json.dumps(value, ensure_ascii=choose((False, True)))


def _xml_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def write_calls(format: str, calls: list[tuple[str, dict]], choose: Choose) -> str:
    """The calls as the model writes them in ``format`` (``choose`` picks where the model may write either way)."""
    if not calls:
        return ""
    if format == "hermes":
        return "".join(f'<tool_call>\n{_json({"name": n, "arguments": a}, choose)}\n</tool_call>' for n, a in calls)
    if format == "qwen3_coder":
        return "".join("<tool_call>\n<function=" + n + ">\n" + "".join(
            f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in a.items()) + "</function>\n</tool_call>"
            for n, a in calls)
    if format == "llama3_json":
        tag = choose(("", "<|python_tag|>"))
        return tag + "; ".join(_json({"name": n, "parameters": a}, choose) for n, a in calls)
    if format == "mistral":
        if choose((False, True)):
            return "[TOOL_CALLS]" + _json([{"name": n, "arguments": a} for n, a in calls], choose)
        return "".join(f"[TOOL_CALLS]{n}[ARGS]{_json(a, choose)}" for n, a in calls)
    if format == "deepseek_r1":
        return "<｜tool▁calls▁begin｜>" + "\n".join(
            f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_json(a, choose)}\n```<｜tool▁call▁end｜>"
            for n, a in calls) + "<｜tool▁calls▁end｜>"
    if format == "deepseek_v31":
        return "<｜tool▁calls▁begin｜>" + "".join(
            f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_json(a, choose)}<｜tool▁call▁end｜>" for n, a in calls) + "<｜tool▁calls▁end｜>"
    if format == "kimi_k2":
        return "<|tool_calls_section_begin|>" + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_json(a, choose)}<|tool_call_end|>"
            for i, (n, a) in enumerate(calls)) + "<|tool_calls_section_end|>"
    if format == "glm45":
        return "".join(f"\n<tool_call>{n}\n" + "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{_xml_value(v)}</arg_value>\n" for k, v in a.items()) + "</tool_call>"
            for n, a in calls)
    if format == "minimax_m2":
        return "<minimax:tool_call>\n" + "".join(f'<invoke name="{n}">\n' + "".join(
            f'<parameter name="{k}">{_xml_value(v)}</parameter>\n' for k, v in a.items()) + "</invoke>\n"
            for n, a in calls) + "</minimax:tool_call>"
    if format == "gpt_oss":
        return "".join("<|start|>assistant" + choose(HARMONY_CALL_HEADERS).format(name=n)
                       + _json(a, choose) + "<|call|>" for n, a in calls)
    raise ValueError(f"unknown format {format!r}")


REASONING_TAGS = {"mistral": ("[THINK]", "[/THINK]"), "gpt_oss": ("<|channel|>analysis<|message|>", "<|end|>"),
                  "llama3_json": None}


def write_message(format: str, reasoning: str | None, content: str, calls: list, starts_in_reasoning: bool,
                  choose: Choose) -> str:
    think = REASONING_TAGS.get(format, ("<think>", "</think>"))
    text = ""
    if reasoning is not None and think:
        text = ("" if starts_in_reasoning else think[0]) + reasoning + think[1]
    if format == "gpt_oss":
        final = f"<|start|>assistant<|channel|>final<|message|>{content}<|return|>" if content else ""
        return text + write_calls(format, calls, choose) + final
    if format == "llama3_json" and calls:
        return write_calls(format, calls, choose)  # the whole output is the calls
    return text + content + write_calls(format, calls, choose)


@st.composite
def malformed(draw, text: str, format: str) -> str:
    """``text`` broken in one of the ways models break it, or left alone."""
    how = draw(st.sampled_from(["none", "none", "truncate", "drop", "insert", "tag"]))
    if how == "none" or not text and how != "tag":
        return text
    at = draw(st.integers(0, len(text)))
    if how == "truncate":
        return text[:at]
    if how == "drop":
        return text[:at] + text[at + 1:]
    inserted = draw(st.sampled_from(tags(format))) if how == "tag" else draw(st.sampled_from('"{}[],:\\ \n<>'))
    return text[:at] + inserted + text[at:]


@st.composite
def model_outputs(draw, format: str) -> dict:
    """One model output in ``format`` and the request it answers (tools, reasoning flags)."""
    strings = tricky_text(format)
    choose = lambda options: draw(st.sampled_from(options))  # noqa: E731
    calls = draw(st.lists(tool_call(strings), max_size=3))
    reasoning_text = draw(st.none() | strings)
    if reasoning_text is not None and draw(st.integers(0, 5)) == 0 and calls:
        reasoning_text += write_calls(format, calls[:1], choose)  # a call inside reasoning is reasoning
    starts_in_reasoning = reasoning_text is not None and draw(st.booleans())
    text = write_message(format, reasoning_text, draw(strings), calls, starts_in_reasoning, choose)
    return {"format": format, "text": draw(malformed(text, format)),
            "tools": draw(st.none() | st.just(list(TOOLS))), "reasoning": draw(st.integers(0, 7)) > 0,
            "starts_in_reasoning": starts_in_reasoning}


def hard_outputs(format: str) -> list[dict]:
    """Fixed outputs in ``format`` that every run checks, whatever Hypothesis draws: reasoning, content
    ending in a tag's beginning that never completes, and two calls (one without arguments), once with
    every tag of the format inside a string argument, quotes and escapes (where a tag inside a string
    must not end a call, it must not), once with plain strings; each written both ways the model may
    write it (first and last choice); and the outputs of the servers' own parser tests in ``format``
    (server_test_outputs)."""
    outputs = []
    for number, string in enumerate(("".join(tags(format)) + ' "q" \\ é', "Paris")):
        choose = (lambda options: options[0]) if number == 0 else (lambda options: options[-1])
        calls = [("search", {"query": string, "limit": 3}), ("noop", {})]
        content = "Hi " + tags(format)[0][:-1] + "~ "
        text = write_message(format, "Let me think", content, calls, number == 1, choose)
        outputs.append({"format": format, "text": text, "tools": list(TOOLS), "reasoning": True,
                        "starts_in_reasoning": number == 1})
    return outputs + server_test_outputs(format)


def server_test_outputs(format: str) -> list[dict]:
    """The model outputs of the servers' own parser tests in ``format`` (corpora/server_parser_tests),
    with the request each test stands for: the forms real models write that the servers read, so
    every run checks impl against the reference on them, whole and streamed.

    >>> server_test_outputs("mistral")[0]
    {'format': 'mistral', 'text': 'This is a test', 'tools': None, 'reasoning': True, 'starts_in_reasoning': False}
    """
    return [{"format": format, "text": case["text"], "tools": case.get("tools"),
             "reasoning": case.get("reasoning", True), "starts_in_reasoning": case.get("starts_in_reasoning", False)}
            for case in server_parser_tests()["cases"] if case["format"] == format]


# Round trips: (shared template, arguments as a dict or as JSON text) per format; gpt_oss has no template.
ROUND_TRIP_TEMPLATES = {
    "hermes": ("vllm_hermes", "dict"), "qwen3_coder": ("vllm_qwen3coder", "dict"),
    "llama3_json": ("vllm_llama3.1_json", "dict"), "mistral": ("llamacpp_mistral_small_3_1", "dict"),
    "deepseek_r1": ("vllm_deepseekr1", "dict"), "deepseek_v31": ("llamacpp_deepseek_v3_1", "json"),
    "kimi_k2": ("llamacpp_kimi_k2_thinking", "dict"), "glm45": ("llamacpp_glm_4_6", "dict"),
    "minimax_m2": ("llamacpp_minimax_m2", "dict"),
}
SINGLE_CALL_FORMATS = {"llama3_json"}  # its template raises on more than one call


@st.composite
def assistant_messages(draw, format: str) -> dict:
    """An assistant message with 1-3 calls of listed tools (plain values a template writes back as they
    are) and maybe reasoning, in the shape ``format``'s round-trip template takes."""
    calls = draw(st.lists(tool_call(plain_text(), unknown=False), min_size=1,
                          max_size=1 if format in SINGLE_CALL_FORMATS else 3))
    as_json = ROUND_TRIP_TEMPLATES[format][1] == "json"
    tool_calls = [{"id": f"functions.{name}:{i}" if format == "kimi_k2" else f"call{i:06d}abc", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(arguments) if as_json else arguments}}
                  for i, (name, arguments) in enumerate(calls)]
    message = {"role": "assistant", "content": draw(st.sampled_from(["", "Sure."])), "tool_calls": tool_calls}
    if draw(st.booleans()):
        message["reasoning_content"] = draw(plain_text())
    return message



THINKING_OFF = "enable_thinking: false (the prompt closed an empty think block)"


def thinking_off_output(format: str) -> dict | None:
    """What a model writes after a generation prompt rendered with enable_thinking false, which closes
    an empty think block itself (Qwen3's '<think>\\n\\n</think>\\n\\n'): content and a call, no reasoning
    tag at all, parsed with reasoning on and starts_in_reasoning false; None for a format without
    reasoning tags.

    >>> thinking_off_output("hermes")["text"][:5], thinking_off_output("llama3_json")
    ('Sure.', None)
    """
    if REASONING_TAGS.get(format, ()) is None:
        return None
    text = write_message(format, None, "Sure.", [("get_weather", {"city": "Paris"})], False, lambda options: options[0])
    return {"format": format, "text": text, "tools": list(TOOLS), "reasoning": True, "starts_in_reasoning": False}


def option_strata(format: str) -> dict[str, dict]:
    """One fixed output in ``format`` (reasoning, content, a call with typed arguments and one of an
    unlisted tool) for every combination of the parser's options, by stratum name: tools absent or
    listed (XML formats type arguments by the listed schemas), reasoning parsed or not, the output
    starting inside reasoning or not (its open tag then left out, as a template's prompt holds it).

    >>> sorted(option_strata("hermes"))[0]
    'tools: None, reasoning: False, starts_in_reasoning: False'
    """
    calls = [("get_weather", {"city": "Paris", "days": 3, "metric": True}), (UNKNOWN_TOOL, {"x": "1"})]
    strata = {}
    for tools in (None, list(TOOLS)):
        for reasoning in (True, False):
            for starts_in_reasoning in (False, True):
                text = write_message(format, "Let me think", "Sure.", calls, starts_in_reasoning, lambda options: options[0])
                name = f"tools: {'None' if tools is None else 'listed'}, reasoning: {reasoning}, " \
                       f"starts_in_reasoning: {starts_in_reasoning}"
                strata[name] = {"format": format, "text": text, "tools": tools, "reasoning": reasoning,
                                "starts_in_reasoning": starts_in_reasoning}
    return strata
