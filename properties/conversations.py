"""Hypothesis strategies for chat requests: conversations and the options around them.

A request is plain JSON data, the input of a chat case (oracles.chat_oracle.ChatRequest):

    {"messages": [{"role": "user", "content": "hello"}], "tools": None, "documents": None,
     "add_generation_prompt": True, "continue_final_message": False, "variables": {"enable_thinking": False}}

Most conversations are well formed (a system message or not, then user turns answered by the
assistant, with tool calls, parallel calls and their results), because most templates reject
anything else; some are any sequence of roles, to compare the errors. Message text mixes plain
words, non-ASCII, control tokens and template syntax (``{{``, ``{%``), and is sometimes very long.
Every choice's first alternative is the simplest, so failures shrink towards short plain messages.
"""
from __future__ import annotations

import json
import string
from collections.abc import Collection

from hypothesis import strategies as st

from .strategies import TRICKY_CHARACTERS, unicode_text

# Chat markers of common template families, whether or not the family under test has them as tokens.
CHAT_MARKERS = ("<|im_start|>", "<|im_end|>", "<s>", "</s>", "[INST]", "[/INST]", "<<SYS>>", "<|eot_id|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|endoftext|>", "<think>", "</think>",
                "<tool_call>", "</tool_call>", "<|user|>", "<|assistant|>", "<|end|>")
TEMPLATE_SYNTAX = ("{{", "}}", "{%", "%}", "{#", "#}", "{{ messages }}", "{% if true %}x{% endif %}",
                   "{%- raw -%}", "{{ raise_exception('x') }}", "{% endfor %}", "'", '"', "\\")
REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")
LONG_REPEATS = (100, 1000)  # a very long message: a short text repeated this many times
TOOLS = (
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city, e.g. Zürich"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web <b>now</b> & return “results”.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}, "required": ["query"]}}},
)
TOOL_NAMES = tuple(tool["function"]["name"] for tool in TOOLS)


def plain_words(max_size: int = 6) -> st.SearchStrategy[str]:
    word = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)
    return st.lists(word, min_size=1, max_size=max_size).map(" ".join)


def message_text(control_tokens: Collection[str] = ()) -> st.SearchStrategy[str]:
    """Words; or text mixing non-ASCII, control tokens and template syntax; rarely very long."""
    markers = sorted(set(control_tokens) | set(CHAT_MARKERS))
    piece = st.one_of(plain_words(2), st.sampled_from(markers), st.sampled_from(TEMPLATE_SYNTAX),
                      st.sampled_from(TRICKY_CHARACTERS), st.sampled_from(["\n", "\n\n", " ", "  ", "\t"]))
    long = st.tuples(plain_words(3), st.integers(*LONG_REPEATS)).map(lambda pair: (pair[0] + "\n") * pair[1])
    # One draw in 16, at the far end of the range so that shrinking moves away from it.
    rarely_long = st.integers(0, 15).flatmap(lambda n: long if n == 15 else plain_words())
    return st.one_of(plain_words(), st.lists(piece, min_size=1, max_size=8).map("".join), unicode_text(6), rarely_long)


def content(text: st.SearchStrategy[str]) -> st.SearchStrategy:
    """A message's content: a string, a list of text blocks, or None."""
    block = text.map(lambda t: {"type": "text", "text": t})
    return st.one_of(text, st.lists(block, min_size=1, max_size=3), st.none())


def arguments(text: st.SearchStrategy[str]) -> st.SearchStrategy:
    """Tool-call arguments as an object or as a JSON string of one."""
    value = st.one_of(text, st.integers(-5, 10**6), st.booleans(), st.lists(st.integers(0, 9), max_size=3))
    obj = st.dictionaries(st.sampled_from(["city", "query", "limit", "unit", "ключ"]), value, max_size=3)
    return st.one_of(obj, obj.map(lambda args: json.dumps(args, ensure_ascii=False)))


def tool_calls(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict]]:
    """One call or several in parallel, with ids."""
    call = st.tuples(st.sampled_from(TOOL_NAMES), arguments(text))
    return st.lists(call, min_size=1, max_size=3).map(lambda calls: [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)])


def with_reasoning(message: dict, text: st.SearchStrategy[str]) -> st.SearchStrategy[dict]:
    """The message, or the message with reasoning under one of the names it goes by."""
    reasoning = st.tuples(st.sampled_from(REASONING_FIELDS), text).map(lambda pair: {**message, pair[0]: pair[1]})
    return st.one_of(st.just(message), reasoning)


@st.composite
def assistant_turn(draw, text: st.SearchStrategy[str]) -> list[dict]:
    """An assistant reply: plain, or tool calls, their results and maybe a reply after them."""
    reply = draw(content(text).flatmap(lambda c: with_reasoning({"role": "assistant", "content": c}, text)))
    if not draw(st.booleans()):
        return [reply]
    calls = draw(tool_calls(text))
    turn = [{**reply, "tool_calls": calls}]
    turn += [{"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": draw(text)}
             for call in calls]
    if draw(st.booleans()):
        turn.append({"role": "assistant", "content": draw(text)})
    return turn


@st.composite
def well_formed_messages(draw, text: st.SearchStrategy[str]) -> list[dict]:
    messages = [{"role": "system", "content": draw(content(text))}] if draw(st.booleans()) else []
    for turn in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(content(text))})
        if turn or draw(st.booleans()):
            messages += draw(assistant_turn(text))
    return messages


def any_messages(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict]]:
    """Any sequence of roles, known or not: where templates raise, impl must raise the same."""
    role = st.sampled_from(["user", "assistant", "system", "tool", "developer", "bot"])
    message = st.tuples(role, content(text)).map(lambda pair: {"role": pair[0], "content": pair[1]})
    return st.lists(message, min_size=1, max_size=4)


def variables(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict]:
    """Template variables beyond the messages: thinking switches and others real templates read."""
    optional = {
        "enable_thinking": st.booleans(),
        "tools_in_user_message": st.booleans(),
        "date_string": st.just("26 Jul 2024"),
        "reasoning_effort": st.sampled_from(["low", "medium", "high"]),
        "custom_instructions": text,
        "keep_cot": st.booleans(),
    }
    return st.fixed_dictionaries({}, optional=optional)


def documents(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict] | None]:
    document = st.fixed_dictionaries({"title": text, "text": text})
    return st.one_of(st.none(), st.lists(document, min_size=1, max_size=2))


# How the request ends; "both" asks for add_generation_prompt and continue_final_message together,
# an error transformers raises, so that the errors are compared too.
ENDINGS = {
    "plain": {"add_generation_prompt": False, "continue_final_message": False},
    "generation_prompt": {"add_generation_prompt": True, "continue_final_message": False},
    "continue": {"add_generation_prompt": False, "continue_final_message": True},
    "continue_reasoning": {"add_generation_prompt": False, "continue_final_message": "reasoning_content"},
    "both": {"add_generation_prompt": True, "continue_final_message": True},
}


@st.composite
def chat_requests(draw, control_tokens: Collection[str] = ()) -> dict:
    """A request: messages, tools, documents, add_generation_prompt / continue_final_message and variables."""
    text = message_text(control_tokens)
    well_formed = well_formed_messages(text)
    return {
        "messages": draw(st.one_of(well_formed, well_formed, well_formed, any_messages(text))),
        "tools": draw(st.one_of(st.none(), st.lists(st.sampled_from(TOOLS), min_size=1, max_size=2, unique_by=str))),
        "documents": draw(documents(text)),
        **ENDINGS[draw(st.sampled_from(list(ENDINGS)))],
        "variables": draw(variables(text)),
    }


# -- request strata: every shape a server sends, each checked at every budget ------------------------

QUESTION = "What is the weather in Zürich?"
STRATUM_BASE = {"messages": [{"role": "user", "content": QUESTION}], "tools": None, "documents": None,
                **ENDINGS["generation_prompt"], "variables": {}}
_CALL = {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}
_CALL_TURN = [{"role": "user", "content": QUESTION},
              {"role": "assistant", "content": None, "tool_calls": [_CALL]},
              {"role": "tool", "tool_call_id": "call_0", "name": "get_weather", "content": "18 °C, clear"}]


def _varied(**changes) -> dict:
    return {**STRATUM_BASE, **changes}


def _call_turn(arguments) -> list[dict]:
    """The question, an earlier call to get_weather with ``arguments``, and its result."""
    call = {**_CALL, "function": {**_CALL["function"], "arguments": arguments}}
    return [_CALL_TURN[0], {**_CALL_TURN[1], "tool_calls": [call]}, _CALL_TURN[2]]


def _continued(final: str) -> dict:
    """The question, then an assistant message ``final`` for the model to continue."""
    return _varied(messages=[*STRATUM_BASE["messages"], {"role": "assistant", "content": final}], **ENDINGS["continue"])


def joined_text_parts(content: list) -> str:
    """A content's text parts joined with "\\n", as vLLM's "string" content format hands them to a
    template (vllm/entrypoints/chat_utils.py ``_parse_chat_message_content_parts``).

    >>> joined_text_parts([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}])
    'a\\nb'
    """
    return "\n".join(part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text")


def decoded_arguments(arguments):
    """A call's ``arguments`` as vLLM's chat preparation hands them to a template
    (vllm/entrypoints/chat_utils.py ``_postprocess_messages``): a JSON string decoded; an empty or
    undecodable string, or JSON that is not an object, read as {}.

    >>> decoded_arguments('{"city":"Zürich"}'), decoded_arguments(""), decoded_arguments("[1]")
    ({'city': 'Zürich'}, {}, {})
    """
    if isinstance(arguments, dict):
        return arguments
    try:
        decoded = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except json.JSONDecodeError:
        decoded = {}
    return decoded if isinstance(decoded, dict) else {}


def with_call_arguments(messages: list, change) -> list:
    """The messages with ``change`` applied to each call's ``arguments`` (copies; other messages,
    and calls without a function object, as they were).

    >>> with_call_arguments([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}], len)
    [{'role': 'assistant', 'tool_calls': [{'function': {'arguments': 2}}]}]
    """
    def changed(message):
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not isinstance(calls, list):
            return message
        return {**message, "tool_calls": [
            {**call, "function": {**call["function"], "arguments": change(call["function"].get("arguments"))}}
            if isinstance(call, dict) and isinstance(call.get("function"), dict) else call for call in calls]}
    return [changed(message) for message in messages]


def vllm_prepared(request: dict) -> dict:
    """The request as vLLM's chat preparation hands it to apply_chat_template when the template does
    not iterate over content (its "string" content format, the default): content parts joined
    (joined_text_parts) and each earlier call's arguments decoded (decoded_arguments).

    >>> vllm_prepared({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
    ...     {"type": "text", "text": "b"}]}]})["messages"]
    [{'role': 'user', 'content': 'a\\nb'}]
    """
    messages = [{**m, "content": joined_text_parts(m["content"])} if isinstance(m.get("content"), list) else m
                for m in request["messages"]]
    return {**request, "messages": with_call_arguments(messages, decoded_arguments)}


def request_strata() -> dict[str, dict]:
    """Every request shape servers send, one change from a plain one-question request each (tools
    absent, None, an empty list, one, many; an earlier call's arguments as an object, a compact JSON
    string and an empty string; documents; chat_template_kwargs; content as a string, as parts, None,
    with Unicode spaces at its ends; continue_final_message, with trailing whitespace and of an empty
    message), and each as vLLM hands it to the template where that differs (vllm_prepared), by
    stratum name:

    >>> request_strata()["tools: an empty list"]["tools"]
    []
    """
    absent = {key: value for key, value in STRATUM_BASE.items() if key != "tools"}
    parts = [{"type": "text", "text": "What is the weather"}, {"type": "text", "text": " in Zürich?"}]
    strata = {
        "tools: absent": absent,
        "tools: None": STRATUM_BASE,
        "tools: an empty list": _varied(tools=[]),
        "tools: one": _varied(tools=[TOOLS[0]]),
        "tools: many": _varied(tools=list(TOOLS)),
        "tools: a call and its result": _varied(messages=_CALL_TURN, tools=list(TOOLS)),
        "documents: one": _varied(documents=[{"title": "Zürich", "text": "Zürich lies on a lake."}]),
        "chat_template_kwargs: enable_thinking true": _varied(variables={"enable_thinking": True}),
        "chat_template_kwargs: enable_thinking false": _varied(variables={"enable_thinking": False}),
        "chat_template_kwargs: others": _varied(variables={"reasoning_effort": "high", "date_string": "26 Jul 2024",
                                                           "custom_instructions": "Answer briefly."}),
        "content: parts": _varied(messages=[{"role": "user", "content": parts}]),
        "content: one part": _varied(messages=[{"role": "user", "content": parts[:1]}]),
        # what a template's trim strips: Jinja2's str.strip takes any Unicode space, a C engine's isspace ASCII's
        "content: Unicode spaces at its ends": _varied(messages=[{"role": "user", "content": f"\u00a0{QUESTION}\u3000"}]),
        "content: None": _varied(messages=[{"role": "user", "content": QUESTION},
                                           {"role": "assistant", "content": None}], add_generation_prompt=False),
        "system message": _varied(messages=[{"role": "system", "content": "Be brief."}, *STRATUM_BASE["messages"]]),
        "ending: continue_final_message": _continued("It is"),
        "ending: no generation prompt": _varied(**ENDINGS["plain"]),
    }
    # chat preparation: what OpenAI clients send, and the same request as vLLM hands it over
    sent = {
        # compact, as OpenAI clients serialize it: json.dumps's spaced form is what tojson writes for the object
        "tools: an earlier call, arguments a compact JSON string": _varied(
            messages=_call_turn(json.dumps(_CALL["function"]["arguments"], ensure_ascii=False, separators=(",", ":"))),
            tools=list(TOOLS)),
        "tools: an earlier call, arguments an empty string": _varied(messages=_call_turn(""), tools=list(TOOLS)),
        "ending: continue_final_message with trailing whitespace": _continued("It is "),
        "ending: continue_final_message of an empty assistant message": _continued(""),
    }
    known = [*strata.values(), *sent.values()]
    for name, request in [*sent.items(), ("content: parts", strata["content: parts"])]:
        prepared = vllm_prepared(request)
        if prepared not in known:
            strata[f"{name}, as vLLM hands it over"] = prepared
            known.append(prepared)
    return {**strata, **sent}
