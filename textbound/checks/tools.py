"""Checks of the ``tools`` component: impl's parse_response and OutputParser against
oracles.tool_reference (a whole-text reference) and transformers' response parser
(oracles.transformers_response) where a response template can express the format.

A case's input: ``format``, ``text`` (the model output), ``tools`` (the request's, OpenAI format),
``reasoning``, ``starts_in_reasoning`` and ``splits`` (cut points of the text into deltas; past the
end counts as the end). Messages are compared in the reference's shape: content and reasoning
exactly (the reference keeps whitespace verbatim, as transformers and vLLM do; only round trips
strip the reasoning, whose surrounding line breaks are the template's), each call's name, and its
arguments as JSON values. A call the implementation flags ``"error": "malformed call: ..."`` (it
announced the call while streaming, then the block turned out malformed and came back as content)
is not a call: it is left out of the comparison, and its name must stand in the content, where
its block went.

- tools/whole: parse_response equals the reference, in OpenAI's shape (content null beside tool calls
  when there is no text, a string otherwise). A message that is the reference's for the output read
  as starting on the other side of reasoning is named so, whatever field shows it. Where transformers answers (on well-formed
  output: see ``judged``) and differs from the reference, the case is an *oracle disagreement* (kind
  ``oracle disagreement: ...``, naming which side impl took and the template's known limits), not an
  impl divergence: reports list those apart.
- tools/stream: the deltas of OutputParser, fed the split text, assemble to the reference's message,
  with the argument text of impl's own whole parse byte for byte where the format's arguments are
  JSON. A stream assembling to a whole parse that differs from the reference is left to the whole
  case of the same input (every stream case has one), as is a whole parse that differs from a
  right stream.
- tools/deltas: what the assembled message cannot show, where it is the reference's (else the
  stream case of the same input, every deltas case has one, names it: deltas only add, so text the
  reference does not have, a tag or part of one leaked, is in what they assemble to): indexes start
  at 0 and grow by one; id, type and name come once, in a call's first delta; arguments are JSON
  text, ``{}`` for none (a call flagged malformed too); content and reasoning are held back only
  while the unreleased tail may begin a tag (as the stop checker).
- tools/tokens: the text's ids streamed through the detokenizer, then the parser, equal the
  reference's message for the decoded text; a message the parser gives alone, fed the oracle's
  decode in the same deltas, is the parser's and left to tools/whole and tools/stream.
- vLLM's parsers, where ``$TEXTBOUND_VLLM_ORACLE_PYTHON`` names an environment holding vllm, are a
  second oracle of tools/whole and tools/stream: where impl and the reference agree and vLLM
  answers otherwise, an oracle disagreement of its own kind (tools_vllm).
- tools/round_trip: an assistant message rendered by a model's own template (transformers) parses
  back, from the assistant part of the rendered text, to the same calls and reasoning. Where impl
  reads that part otherwise than the reference, the whole case of the part (every round-trip case
  has one) names it; where impl reads it as the reference does and the message does not come back,
  the template and the reference disagree (an oracle disagreement).

So one bug gives one signature: a property names only what the properties it defers to cannot
show, and kinds say what differs, never in which format (the format is in the details, ``where``,
and the example): one bug in code all formats share is one signature, however many formats meet it.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass

from textbound.oracles import tool_reference, transformers_response
from textbound.oracles.chat_oracle import TEMPLATES_ENV, TemplateNotFound, render, templates_dir
from textbound.oracles.tool_reference_core import FALLBACK, Parsed

from ..naming.divergence import ORACLE_DISAGREEMENT, Case, Divergence
from . import tools_vllm
from .registry import Subject, check, impl_call, oracle_call
from .streaming import chunks

REASONING_OPEN = {"mistral": "[THINK]", "gpt_oss": "<|channel|>analysis<|message|>", "llama3_json": None}
# What ends an assistant turn in the round-trip templates: a stop token, not model output.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "</s>", "<｜end▁of▁sentence｜>", "[e~[", "<|return|>")
SPECIAL_VARIABLES = {"bos_token": "<s>", "eos_token": "</s>"}


@dataclass(frozen=True)
class ToolInput:
    format: str
    text: str
    tools: list | None
    reasoning: bool
    starts_in_reasoning: bool
    splits: list[int]

    @classmethod
    def of(cls, case: Case) -> "ToolInput":
        given = case.input
        return cls(given["format"], given["text"], given.get("tools"), given.get("reasoning", True),
                   given.get("starts_in_reasoning", False), given.get("splits", []))

    @property
    def options(self) -> dict:
        return {"tools": self.tools, "reasoning": self.reasoning, "starts_in_reasoning": self.starts_in_reasoning}

    def pieces(self) -> list[str]:
        return ["".join(piece) for piece in chunks(list(self.text), self.splits)]

    def reference(self) -> Parsed:
        return tool_reference.parse(self.text, self.format, **self.options)


# How the error of a call flagged malformed begins (impl.tools.MALFORMED_CALL: the implementation's
# way to take back a call it announced before its block turned out to be content).
MALFORMED_FLAG = "malformed call"


def is_flagged_malformed(call: dict) -> bool:
    return str(call.get("error") or "").startswith(MALFORMED_FLAG)


def message_of(impl_message: dict) -> dict:
    """impl's message (parse_response's or assemble's) in the reference's shape, less the calls flagged
    malformed; arguments that are not JSON stay the raw text, so they differ from any reference value."""
    calls = []
    for call in impl_message.get("tool_calls") or []:
        if is_flagged_malformed(call):
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments")
        try:
            arguments = json.loads(arguments)
        except (TypeError, ValueError):
            pass
        calls.append({"name": function.get("name"), "arguments": arguments})
    return {"content": impl_message.get("content") or "", "reasoning_content": impl_message.get("reasoning_content") or "",
            "calls": calls}


def same_json(a: object, b: object) -> bool:
    """JSON values equal as JSON: numbers by value (1 == 1.0), but booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same_json, a, b))
    return type(a) is type(b) and a == b


def message_difference(expected: dict, actual: dict, fields: tuple[str, ...] = ("content", "reasoning_content"),
                       strip: bool = False) -> dict | None:
    """The first difference between two messages: ``{"field": ..., "expected": ..., "actual": ...}``;
    ``strip``: the text fields' surrounding whitespace does not count."""
    for name in fields:
        if (expected[name].strip() != actual[name].strip()) if strip else expected[name] != actual[name]:
            return {"field": name, "expected": expected[name], "actual": actual[name]}
    if len(expected["calls"]) != len(actual["calls"]):
        return {"field": "call count", "expected": len(expected["calls"]), "actual": len(actual["calls"])}
    for index, (want, got) in enumerate(zip(expected["calls"], actual["calls"])):
        if want["name"] != got["name"]:
            return {"field": "name", "call": index, "expected": want["name"], "actual": got["name"]}
        if not same_json(want["arguments"], got["arguments"]):
            return {"field": "arguments", "call": index, "expected": want["arguments"], "actual": got["arguments"]}
    return None


TEXT_PARTS = {"content": "content", "reasoning_content": "reasoning"}


def read_otherwise(expected: dict, actual: dict, difference: dict) -> str:
    """A whole parse's difference, told apart where a text field took a call's markup or gave text
    to a call (a call's block read as text, text read as a call: different reading rules, hence
    different bugs); the format is not named (one rule, shared, breaks in every format).

    >>> read_otherwise({"content": "", "reasoning_content": "", "calls": [{"name": "f", "arguments": {}}]},
    ...                {"content": "<tool_call>...</tool_call>", "reasoning_content": "", "calls": []},
    ...                {"field": "content"})
    'content differs: a call read as content'
    """
    field = difference["field"]
    if field in TEXT_PARTS and len(actual["calls"]) != len(expected["calls"]):
        # Named by the part that took the call's text (or gave the call its text), which need not be
        # the first that differs: a call read into reasoning changes the content before it too.
        if len(actual["calls"]) < len(expected["calls"]):
            took = next((name for name in TEXT_PARTS if len(actual[name]) > len(expected[name])), field)
            return f"{took} differs: a call read as {TEXT_PARTS[took]}"
        gave = next((name for name in TEXT_PARTS if len(actual[name]) < len(expected[name])), field)
        return f"{gave} differs: {TEXT_PARTS[gave]} read as a call"
    return f"{field} differs"


def flag_reading(given: "ToolInput", actual: dict) -> str | None:
    """The request's reasoning flags read otherwise, where that gives the reference impl's message
    (a reasoning state read wrong is one bug, whichever part of the message shows it first):
    ``"parses as if starts_in_reasoning were false"``."""
    for flag in ("starts_in_reasoning", "reasoning"):
        flipped = {**given.options, flag: not given.options[flag]}
        read, error = oracle_call(lambda: tool_reference.parse(given.text, given.format, **flipped).message())
        if error is None and message_difference(read, actual) is None:
            return f"parses as if {flag} were {json.dumps(flipped[flag])}"
    return None


def well_formed(reference: Parsed) -> bool:
    """Whether the reference read all the markup (no malformed block, no stray section tag)."""
    return all(span.kind != FALLBACK for span in reference.spans)


def judged(case: Case, given: ToolInput, reference: Parsed, actual: dict,
           transformers: Callable[[], transformers_response.TransformersAnswer], what: str,
           by_parts: bool = False) -> Divergence | None:
    """impl's ``actual`` against the reference's message (``by_parts``: the kind told by a reasoning
    flag read otherwise, ``flag_reading``, where one gives impl's message, else by ``read_otherwise``;
    else by the first differing field), with transformers' answer as the tie-breaker
    on well-formed output: where transformers answers and disagrees with the reference, the case is an
    oracle disagreement (unless impl agrees with neither), never silently passed nor blamed on impl.
    Malformed output is the reference's alone: transformers' parser has no fallback to content (it
    raises on broken JSON, reads broken XML leniently, reads what an unterminated region holds), so
    the rule impl follows there (malformed markup is content, so what the model wrote is not lost) is
    not one it can express."""
    expected = reference.message()
    impl_vs_reference = message_difference(expected, actual)
    answer = transformers() if well_formed(reference) else transformers_response.TransformersAnswer(
        None, "malformed output: the reference's rule")
    oracle_vs_reference = answer.message is not None and message_difference(expected, answer.message)
    where = {"format": given.format, "splits": given.splits}
    if oracle_vs_reference and (impl_vs_reference is None or message_difference(answer.message, actual) is None):
        sided = "reference" if impl_vs_reference is None else "transformers"
        return Divergence(case, expected, answer.message,
                          f"{ORACLE_DISAGREEMENT} {given.format}: {oracle_vs_reference['field']} differs",
                          {**where, **oracle_vs_reference, "impl_sides_with": sided, "template": answer.template,
                           "transformers_limits": list(answer.limits)})
    if impl_vs_reference:
        # A stream's own bug is in how pieces meet: a flag read otherwise is its whole parse's to name.
        kind = (flag_reading(given, actual) or read_otherwise(expected, actual, impl_vs_reference)) if by_parts \
            else f"{impl_vs_reference['field']} differs"
        return Divergence(case, expected, actual, what + kind, {**where, **impl_vs_reference})
    return None


def misplaced_flagged_call(case: Case, given: ToolInput, impl_message: dict, what: str) -> Divergence | None:
    """A call flagged malformed whose name is not in the content, where its block should have gone."""
    content = impl_message.get("content") or ""
    for index, call in enumerate(impl_message.get("tool_calls") or []):
        name = (call.get("function") or {}).get("name") or ""
        if is_flagged_malformed(call) and name not in content:
            return Divergence(case, f"{name!r} in the content", content,
                              f"{what}a call flagged malformed is not in the content",
                              {"format": given.format, "splits": given.splits, "call": index, "name": name})
    return None


def shape_problem(message: dict) -> str | None:
    """How a complete message breaks OpenAI's shape: content is null exactly when there is no text
    beside tool calls (a string, "" for nothing, when there are none); a call flagged malformed is
    not one (``misplaced_flagged_call`` judges it)."""
    calls = [call for call in message.get("tool_calls") or [] if not is_flagged_malformed(call)]
    content = message.get("content")
    if message.get("role") != "assistant":
        return "role is not assistant"
    if calls and content == "":
        return 'content is "" beside tool calls, not null'
    if not calls and content is None:
        return "content is null without tool calls"
    return None


@check("tools", "whole", minimize="text", family_independent=True)
def check_tools_whole(subject: Subject, case: Case) -> Divergence | None:
    given = ToolInput.of(case)
    reference = given.reference()
    whole, failure = impl_call(case, reference.message(), lambda: subject.impl.parse_response(
        given.text, given.format, **given.options))
    if failure:
        return failure
    if problem := shape_problem(whole):
        return Divergence(case, "an OpenAI-shaped message", whole, problem,
                          {"format": given.format, "content": whole.get("content")})
    return (judged(case, given, reference, message_of(whole), lambda: transformers_response.parse(
        given.text, given.format, **given.options), "", by_parts=True) or misplaced_flagged_call(case, given, whole, "")
        or tools_vllm.second_opinion(case, given, reference.message(), tools_vllm.whole, message_difference))


def _stream(subject: Subject, given: ToolInput, pieces: list[str]) -> tuple[list[list[dict]], dict]:
    """The deltas of each feed (the last list is the final feed's) and what they assemble to."""
    parser = subject.impl.OutputParser(given.format, **given.options)
    fed = [list(parser.feed(piece)) for piece in pieces]
    fed.append(list(parser.feed("", final=True)))
    return fed, subject.impl.assemble([delta for deltas in fed for delta in deltas])


def _argument_texts(message: dict) -> list:
    return [(call.get("function") or {}).get("arguments") for call in message.get("tool_calls") or []
            if not is_flagged_malformed(call)]


def leaves_to_whole(reference: Parsed, whole: dict, streamed: dict) -> bool:
    """Whether a stream that assembles to impl's whole parse of the same text is wrong only where that
    parse is: every stream case has a whole case of the same input, which names the bug, so the
    stream does not name it a second time."""
    return (message_difference(reference.message(), message_of(whole)) is not None
            and message_difference(message_of(whole), message_of(streamed)) is None)


@check("tools", "stream", minimize="text", family_independent=True)
def check_tools_stream(subject: Subject, case: Case) -> Divergence | None:
    given = ToolInput.of(case)
    pieces = given.pieces()
    reference = given.reference()

    def run() -> tuple[dict, dict]:
        return _stream(subject, given, pieces)[1], subject.impl.parse_response(given.text, given.format, **given.options)

    result, failure = impl_call(case, reference.message(), run)
    if failure:
        return failure
    assembled, whole = result
    if leaves_to_whole(reference, whole, assembled):
        return None
    found = judged(case, given, reference, message_of(assembled), lambda: transformers_response.parse(
        given.text, given.format, **given.options), "stream: ")
    if found := found or misplaced_flagged_call(case, given, assembled, "stream: "):
        return found
    where = {"format": given.format, "splits": given.splits}
    if given.format in tool_reference.JSON_ARGUMENT_FORMATS and _argument_texts(assembled) != _argument_texts(whole):
        return Divergence(case, _argument_texts(whole), _argument_texts(assembled),
                          "streamed argument text is not the whole parse's", where)
    return tools_vllm.second_opinion(case, given, reference.message(), tools_vllm.streamed, message_difference,
                                     "stream: ")


class _DeltaRules:
    """The rules on the stream of deltas, checked one delta at a time."""

    def __init__(self, given: ToolInput, reference: Parsed):
        self.given, self.reference = given, reference
        self.so_far = {"content": "", "reasoning_content": ""}
        self.calls: list[dict] = []  # per index: {"id", "name", "arguments"}

    def delta(self, delta: dict) -> tuple[str, dict] | None:
        for name, text in self.so_far.items():
            self.so_far[name] = text + (delta.get(name) or "")
        for call in delta.get("tool_calls") or []:
            if found := self.call(call):
                return found
        return None

    def call(self, call: dict) -> tuple[str, dict] | None:
        index, function = call.get("index"), call.get("function") or {}
        if index == len(self.calls):
            if not call.get("id") or call.get("type") != "function" or not function.get("name"):
                return "a call's first delta lacks its id, type or name", {"index": index, "delta": call}
            self.calls.append({"id": call["id"], "name": function["name"], "arguments": ""})
        elif not isinstance(index, int) or not 0 <= index < len(self.calls):
            return "call index does not start at 0 and grow by one", {"index": index, "calls_so_far": len(self.calls)}
        elif call.get("id") or function.get("name"):
            return "id or name repeated in a later delta", {"index": index, "delta": call}
        self.calls[index]["arguments"] += function.get("arguments") or ""
        return None

    def held_too_much(self, seen: int) -> tuple[str, dict] | None:
        """After seeing ``text[:seen]``: everything but a tail that may begin a tag is released."""
        hold = tool_reference.held_back(self.given.format, self.given.text[:seen], self.given.reasoning)
        for name, kind in (("content", "content"), ("reasoning_content", "reasoning")):
            due = self.reference.released_before(seen - hold, kind)
            if len(self.so_far[name]) < len(due):
                return f"{name} held back though no tag can begin", {"field": name, "seen": seen, "due": due,
                                                                     "released": self.so_far[name]}
        return None

    def final(self) -> tuple[str, dict] | None:
        for index, call in enumerate(self.calls):
            try:
                arguments = json.loads(call["arguments"])
            except ValueError:
                return "call arguments are not JSON text", {"index": index, "arguments": call["arguments"]}
            if not isinstance(arguments, dict):
                return "call arguments are not a JSON object", {"index": index, "arguments": call["arguments"]}
        return None


@check("tools", "deltas", minimize="text", family_independent=True)
def check_tools_deltas(subject: Subject, case: Case) -> Divergence | None:
    given = ToolInput.of(case)
    reference = given.reference()
    pieces = given.pieces()
    streamed, failure = impl_call(case, reference.message(), lambda: _stream(subject, given, pieces))
    if failure:
        return failure
    fed, assembled = streamed
    if (message_difference(reference.message(), message_of(assembled)) is not None
            or misplaced_flagged_call(case, given, assembled, "") is not None):
        return None  # the stream case of the same input (every deltas case has one) names it
    rules, seen = _DeltaRules(given, reference), 0
    for step, deltas in enumerate(fed):
        final = step == len(pieces)
        for delta in deltas:
            if found := rules.delta(delta):
                break
        else:
            seen += 0 if final else len(pieces[step])
            found = rules.final() if final else rules.held_too_much(seen)
        if found:
            kind, detail = found
            return Divergence(case, reference.message(), fed[:step + 1], kind,
                              {"format": given.format, "splits": given.splits, "after": f"feed {step}", **detail})
    return None


@check("tools", "tokens", minimize="text")
def check_tools_tokens(subject: Subject, case: Case) -> Divergence | None:
    given = ToolInput.of(case)
    ids = subject.oracle.encode(given.text)
    decoded, error = oracle_call(lambda: subject.oracle.decode(ids, False))
    if error:
        return None  # the detokenizer checks judge text the oracle cannot decode
    expected = tool_reference.parse(decoded, given.format, **given.options).message()

    def run() -> dict:
        detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=False)
        parser = subject.impl.OutputParser(given.format, **given.options)
        deltas = [delta for token_id in ids for delta in parser.feed(detokenizer.add([token_id]))]
        deltas += parser.feed(detokenizer.flush()) + parser.feed("", final=True)
        return message_of(subject.impl.assemble(deltas))

    actual, failure = impl_call(case, expected, run)
    if failure:
        return failure
    difference = message_difference(expected, actual)
    if difference is None:
        return None
    by_token = ToolInput(given.format, decoded, given.tools, given.reasoning, given.starts_in_reasoning,
                         token_cuts(subject, ids, decoded))
    alone, failure = impl_call(case, expected, lambda: message_of(_stream(subject, by_token, by_token.pieces())[1]))
    if failure is None and message_difference(alone, actual) is None:
        # The parser gives this message fed the right text in the same deltas: its own bug, which
        # tools/whole and tools/stream name on the same output; this property names what the
        # detokenizer in front of it changes.
        return None
    return Divergence(case, expected, actual, f"token stream: {difference['field']} differs",
                      {"format": given.format, "ids": len(ids), **difference})


def token_cuts(subject: Subject, ids: list[int], decoded: str) -> list[int]:
    """Where the oracle's decode of ``ids`` grows, id by id: the end of each prefix's decode that
    begins the whole decode (a prefix ending inside a character's bytes shows no more)."""
    cuts = []
    for text in (subject.oracle.decode(ids[:end], False) for end in range(1, len(ids))):
        if decoded.startswith(text) and len(text) > (cuts[-1] if cuts else 0):
            cuts.append(len(text))
    return cuts


def assistant_part(format: str, template: str, message: dict, tools: list) -> tuple[str, bool]:
    """(what the model wrote for ``message`` in ``template``'s rendering, whether the generation
    prompt left it inside reasoning): the full conversation's text after the generation prompt, less
    the end-of-turn tokens."""
    user = [{"role": "user", "content": "What is the weather in Paris?"}]
    prompt = render(template, user, tools=tools, add_generation_prompt=True, **SPECIAL_VARIABLES)
    full = render(template, [*user, message], tools=tools, **SPECIAL_VARIABLES)
    if not full.startswith(prompt):
        raise ValueError("the rendered conversation does not begin with the generation prompt")
    part = full[len(prompt):]
    while (trimmed := part.rstrip()) and any(trimmed.endswith(end) for end in END_OF_TURN):
        part = trimmed[:-len(next(end for end in END_OF_TURN if trimmed.endswith(end)))]
    opening = REASONING_OPEN.get(format, "<think>")
    return part, bool(opening) and prompt.rstrip().endswith(opening)


@functools.cache
def shared_template(name: str) -> str:
    """The source of ``$TEXTBOUND_TEMPLATES/NAME.jinja``."""
    folder = templates_dir()
    if folder is None:
        raise TemplateNotFound(f"${TEMPLATES_ENV} is not set: no shared template {name!r}")
    return (folder / f"{name}.jinja").read_text(encoding="utf-8")


@dataclass(frozen=True)
class RoundTrip:
    """A round-trip case's assistant message as its template renders it, and the message that
    parsing the rendered part back must give."""

    part: str
    starts_in_reasoning: bool
    expected: dict


def round_trip(given: dict) -> RoundTrip:
    """The case input's message rendered by its template (raising what the template raises) and
    the message expected back: no content, its reasoning where the template renders it, its calls."""
    fmt, template, message, tools = (given[k] for k in ("format", "template", "message", "tools"))
    part, starts_in_reasoning = assistant_part(fmt, shared_template(template), message, tools)
    reasoning = message.get("reasoning_content") or ""
    if reasoning:
        # A template that drops reasoning renders the message alike without it; a substring test
        # cannot tell, since a short reasoning (",") may occur in the call's arguments.
        without, _ = oracle_call(lambda: assistant_part(
            fmt, shared_template(template), {k: v for k, v in message.items() if k != "reasoning_content"}, tools))
        if without is not None and without[0] == part:
            reasoning = ""
    expected = {"content": "", "reasoning_content": reasoning, "calls": [
        {"name": call["function"]["name"], "arguments": call["function"]["arguments"] if isinstance(
            call["function"]["arguments"], dict) else json.loads(call["function"]["arguments"])}
        for call in message["tool_calls"]]}
    return RoundTrip(part, starts_in_reasoning, expected)


@check("tools", "round_trip")
def check_tools_round_trip(subject: Subject, case: Case) -> Divergence | None:
    fmt, tools = case.input["format"], case.input["tools"]
    rendered, error = oracle_call(lambda: round_trip(case.input))
    if error:
        return Divergence(case, "a rendered assistant message", error, "the template cannot render the message",
                          {"format": fmt})
    expected = rendered.expected
    actual, failure = impl_call(case, expected, lambda: message_of(subject.impl.parse_response(
        rendered.part, fmt, tools=tools, starts_in_reasoning=rendered.starts_in_reasoning)))
    reference = tool_reference.parse(rendered.part, fmt, tools=tools,
                                     starts_in_reasoning=rendered.starts_in_reasoning).message()
    if failure or message_difference(reference, actual) is not None:
        return None  # impl reads the part otherwise than the reference: the whole case of the part names it
    if difference := message_difference(expected, actual, fields=("reasoning_content",), strip=True):
        # impl reads the part as the reference does: it is the template and the reference that disagree
        return Divergence(case, expected, actual, f"{ORACLE_DISAGREEMENT} {fmt}: round trip: {difference['field']} differs",
                          {"format": fmt, "assistant_part": rendered.part, "impl_sides_with": "reference", **difference})
    return None
