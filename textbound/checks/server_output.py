"""Checks of what a running server generates, over the wire (textbound.server.dialect), against
`tokenizers`, oracles.stop_reference and `jsonschema`. Sampling is seeded (temperature 1), so a
request sent twice, streamed or not, generates the same tokens; whatever the model generates, the
server's text boundary must treat it as the oracles do.

- detokenizer/server_stream: the concatenated content deltas equal the oracle's decode of the
  returned ids (skip_special_tokens as requested; a stop token that ended the run is not text);
  after every chunk the text shown so far is a beginning of it (no U+FFFD a later id resolves);
  the chunks' ids, where they carry them, are the returned ids. detokenizer/server_specials: the
  same with special tokens kept (skip_special_tokens false), where the dialect can ask that.
- detokenizer/server_whole: streamed and non-streamed, the same text, ids and finish_reason (this
  and stops/server ask the case's chat where the dialect has no completions: OpenAI's public API);
  then the stream ended with the end event its API promises (``data: [DONE]``), where the dialect
  read on without it (``Generation.missing_end``: the other checks see such a stream whole).
- stops/server: stop strings cut around where a first unstopped run's chunks meet; the stopped
  run's text, finish_reason and stop_reason (where the dialect reports one), streamed and not,
  equal ``stop_outcome`` of the unstopped run's text.
- tools/server: with tool_choice "required" or a named function, the streamed tool-call deltas
  assemble to the non-streamed message's tool_calls; finish_reason "tool_calls" only for completed
  calls, never at max_tokens (vllm#58228), streamed or not; a run that ended on its own (not at
  max_tokens) calls a tool it was offered (the named one), with arguments valid for its parameters.
- structured/server: with response_format json_schema, streamed content equals the non-streamed;
  a run that ended on its own has content that is JSON valid for the schema.

A request the server fails is a divergence of kind "server error: <what>" (registry.impl_call).
"""
from __future__ import annotations

import json

import jsonschema

from textbound.oracles.stop_reference import stop_outcome

from ..naming.divergence import REPLACEMENT_CHARACTER, Case, Divergence, first_index
from ..plan.implementation import SERVER
from ..server.dialect import Generation, GenerationRequest
from ..server.features import probe, steering
from .detokenizer import premature_kind
from .registry import Subject, check, impl_call, text_divergence, text_window
from .stops import MISSED, STOPPED_EARLY, outcome_kind
from .streaming import vocabulary_survey

REPORTS_STOP_REASON = ("vllm", "llama.cpp")  # OpenAI's public API has no stop_reason
LENGTH = "length"  # the finish_reason of a run cut at max_tokens


def _generated(subject: Subject, case: Case, request: GenerationRequest) -> tuple[Generation | None, Divergence | None]:
    return impl_call(case, None, lambda: subject.impl.server_dialect.generate(request))


def steered(subject: Subject, given: dict) -> dict:
    """The request fields steering a case's output to its ``steer`` ids, the way the server honours
    (textbound.server.features.steering); none where it honours none, and the run's notes then say
    that the output side ran unsteered: ``{"steer": (5, 7), "steer_by": "allowed_token_ids"}``."""
    ids = given.get("steer")
    if not ids:
        return {}
    way = subject.cached("steering", lambda: steering(subject.impl.server_dialect)[0])
    return {"steer": tuple(ids), "steer_by": way} if way else {}


def steering_note(dialect) -> str | None:
    """The run's note where the server honours no steering (None where it does): its output side
    then checks whatever the model generated, and may never meet a shape its cases were built for."""
    way, why = steering(dialect)
    if way:
        return None
    return (f"the server's output side ran unsteered ({why}): each case checked what the model generated, "
            f"not the output shape it was built for (split characters, byte runs, special and added tokens, "
            f"tool-call tags, a prompt ending mid-character)")


def completion(subject: Subject, given: dict, stream: bool, stop: tuple[str, ...] = (), **fields) -> GenerationRequest:
    """The completion a case (or one of its requests, ``given``) asks, steered where the server can be."""
    return GenerationRequest(prompt=list(given["prompt"]), max_tokens=given["max_tokens"], seed=given["seed"],
                             skip_special_tokens=given.get("skip_special_tokens", True), stream=stream, stop=stop,
                             **steered(subject, given), **fields)


def _text_request(subject: Subject, case: Case, stream: bool, stop: tuple[str, ...] = ()) -> GenerationRequest:
    """The case's completion, or where the dialect has none its chat (compared only with itself)."""
    if subject.cached("completions", lambda: probe(subject.impl.server_dialect, "completions") is None) \
            or "messages" not in case.input:
        return completion(subject, case.input, stream, stop)
    return _chat(case, stream, stop=stop)


def decoded(subject: Subject, given: dict, generation: Generation) -> str:
    """The oracle's text for the returned ids after the prompt: the decode of prompt and ids together
    past the part of the prompt's decode that decode keeps (a server decodes the first ids in the
    prompt's context, as vLLM's detokenizer and tokenizers' DecodeStream primed with the prompt do:
    "Hello" + " world", not "Hello" + "world"; a character or byte-fallback run the prompt leaves
    unfinished is output once the ids finish it). Text some other id would have changed, but the
    returned ones leave alone, was shown with the prompt and is not shown again. A stop token that
    ended the run is not shown.

    ``decoded`` of prompt [Hello] and ids [▁world] on a Metaspace family == " world"; of Llama 2's
    prompt [▁{, <0x0A>] and ids [argument] == "argument" (another byte after <0x0A> would have made
    the "\n" a U+FFFD, but "argument" does not).
    """
    prompt, ids = list(given["prompt"]), list(generation.ids)
    skip = given.get("skip_special_tokens", True)
    if ids and generation.finish_reason == "stop" and ids[-1] in set(vocabulary_survey(subject).special_ids):
        ids = ids[:-1]
    whole, prompt_text = subject.oracle.decode_batch([prompt + ids, prompt], skip)
    settled = prompt_text.rstrip(REPLACEMENT_CHARACTER)
    return whole[first_index(settled, whole):]


@check("detokenizer", "server_stream", minimize="max_tokens", sources=(SERVER,))
@check("detokenizer", "server_specials", minimize="max_tokens", sources=(SERVER,))
def check_server_stream(subject: Subject, case: Case) -> Divergence | None:
    streamed, failure = _generated(subject, case, completion(subject, case.input, stream=True))
    return failure or stream_divergence(subject, case, case.input, streamed)


def stream_divergence(subject: Subject, case: Case, given: dict, streamed: Generation) -> Divergence | None:
    """How a streamed generation of the request ``given`` is not the oracle's decode of its ids:
    a chunk showing what the decode changes, a different whole text, chunk ids not the returned ids."""
    expected = decoded(subject, given, streamed)
    shown = ""
    for index, chunk in enumerate(streamed.chunks):
        shown += chunk.text
        if not expected.startswith(shown):
            at = first_index(expected, shown)
            return Divergence(case, expected, shown, premature_kind(expected, shown, "the decode"), {
                "chunk": index, "index": at, "expected_window": text_window(expected, at),
                "shown_window": text_window(shown, at), "ids": list(streamed.ids), "request": streamed.request})
    if shown != expected:
        found = text_divergence(case, expected, shown)
        found.first_difference.update(ids=list(streamed.ids), request=streamed.request)
        return found
    carried = [chunk.ids for chunk in streamed.chunks]
    if all(ids is not None for ids in carried) and [i for ids in carried for i in ids] != list(streamed.ids):
        return Divergence(case, list(streamed.ids), [list(ids) for ids in carried], "chunk ids are not the returned ids",
                          {"request": streamed.request})
    return None


def _outcome(generation: Generation) -> dict:
    return {"text": generation.text, "ids": list(generation.ids) if generation.ids is not None else None,
            "finish_reason": generation.finish_reason}


@check("detokenizer", "server_whole", minimize="max_tokens", sources=(SERVER,))
def check_server_whole(subject: Subject, case: Case) -> Divergence | None:
    whole, failure = _generated(subject, case, _text_request(subject, case, stream=False))
    streamed, failure = (None, failure) if failure else _generated(subject, case, _text_request(subject, case, stream=True))
    if failure:
        return failure
    expected, actual = _outcome(whole), _outcome(streamed)
    if expected != actual:
        what = next(key for key in expected if expected[key] != actual[key])
        return Divergence(case, expected, actual, f"streamed {what} differs from the non-streamed",
                          {"request": streamed.request})
    if streamed.missing_end is not None:  # a dialect that read past it (transformers-serve): reported here only
        return Divergence(case, f"data: {streamed.missing_end}", "the body's end",
                          f"the stream ends without data: {streamed.missing_end}", {"request": streamed.request})
    return None


def _stop_strings(text: str, generation: Generation, picks: list[dict]) -> tuple[str, ...]:
    """The stop strings ``picks`` cut from ``text`` around where its chunks meet (its middle when
    the text came in one chunk), each once, in order, none holding a U+FFFD."""
    meets, at = [], 0
    for chunk in generation.chunks[:-1]:
        at += len(chunk.text)
        if 0 < at < len(text):
            meets.append(at)
    meets = meets or [len(text) // 2]
    stops = []
    for pick in picks:
        middle = meets[pick.get("at", 0) % len(meets)]
        stops.append(text[max(0, middle - pick.get("before", 0)): middle + pick.get("after", 1)])
    # A U+FFFD in the text stands for bytes that are not UTF-8, which no user sends as a stop string
    # (and a server matching stops against the bytes, as llama.cpp does, never meets).
    return tuple(dict.fromkeys(stop for stop in stops if stop and REPLACEMENT_CHARACTER not in stop))


def _stop_divergence(case: Case, expected: dict, actual: dict, detail: dict) -> Divergence | None:
    if actual == expected:
        return None
    if (actual["finish_reason"] == "stop") != (expected["finish_reason"] == "stop"):
        kind = STOPPED_EARLY if actual["finish_reason"] == "stop" else MISSED
    elif actual["text"] != expected["text"]:
        index = first_index(expected["text"], actual["text"])
        kind = outcome_kind(expected["text"], actual["text"], detail["stops"], "text")
        detail = {**detail, "index": index, "expected_window": text_window(expected["text"], index),
                  "actual_window": text_window(actual["text"], index)}
    elif actual["finish_reason"] != expected["finish_reason"]:
        kind = "reports another finish_reason"
    else:
        kind = "reports another stop_reason"
    return Divergence(case, expected, actual, kind, detail)


@check("stops", "server", minimize="stops", sources=(SERVER,))
def check_server_stops(subject: Subject, case: Case) -> Divergence | None:
    unstopped, failure = _generated(subject, case, _text_request(subject, case, stream=True))
    if failure:
        return failure
    stops = _stop_strings(unstopped.text, unstopped, case.input["stops"])
    if not stops:
        return None  # nothing was generated to cut a stop from
    reference = stop_outcome(unstopped.text, list(stops))
    reports = subject.impl.server_dialect.name in REPORTS_STOP_REASON
    expected = {"text": reference.output,
                "finish_reason": "stop" if reference.stopped else unstopped.finish_reason,
                "stop_reason": (reference.stop_string if reference.stopped else unstopped.stop_reason) if reports else None}
    for stream in (True, False):
        stopped, failure = _generated(subject, case, _text_request(subject, case, stream, stops))
        if failure:
            return failure
        actual = {"text": stopped.text, "finish_reason": stopped.finish_reason,
                  "stop_reason": stopped.stop_reason if reports else None}
        found = _stop_divergence(case, expected, actual, {"stream": stream, "stops": list(stops),
                                                          "unstopped_text": unstopped.text, "request": stopped.request})
        if found:
            return found
    return None


def _chat(case: Case, stream: bool, **fields) -> GenerationRequest:
    given = case.input
    return GenerationRequest(messages=given["messages"], max_tokens=given["max_tokens"], seed=given["seed"],
                             stream=stream, **fields)


def _both(subject: Subject, case: Case, **fields) -> tuple[tuple[Generation, Generation] | None, Divergence | None]:
    """The non-streamed and the streamed generation of one chat request."""
    whole, failure = _generated(subject, case, _chat(case, False, **fields))
    if failure:
        return None, failure
    streamed, failure = _generated(subject, case, _chat(case, True, **fields))
    return (None, failure) if failure else ((whole, streamed), None)


def assembled_calls(generation: Generation) -> list[dict]:
    """The tool calls OpenAI's streamed ``delta.tool_calls`` entries build, by index: id, type and
    name as first sent, arguments concatenated.

    >>> from textbound.server.protocol import Chunk
    >>> assembled_calls(Generation("", None, None, chunks=(Chunk("", tool_call_deltas=(
    ...     {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a"'}},)), Chunk("", tool_call_deltas=(
    ...     {"index": 0, "function": {"arguments": ": 1}"}},)))))
    [{'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"a": 1}'}}]
    """
    calls: dict[int, dict] = {}
    for chunk in generation.chunks:
        for delta in chunk.tool_call_deltas:
            call = calls.setdefault(delta.get("index", 0), {"id": None, "type": "function",
                                                             "function": {"name": None, "arguments": ""}})
            call["id"] = call["id"] or delta.get("id")
            function = delta.get("function") or {}
            call["function"]["name"] = call["function"]["name"] or function.get("name")
            call["function"]["arguments"] += function.get("arguments") or ""
    return [calls[index] for index in sorted(calls)]


def _call_view(calls) -> list[dict]:
    """What two call lists must agree on: each call's name and argument text (ids are the server's)."""
    return [{"name": call["function"]["name"], "arguments": call["function"]["arguments"]} for call in calls]


def schema_problem(text: str, schema: dict) -> str | None:
    """None when ``text`` is JSON valid for ``schema``, else what is wrong in a few words:
    ``schema_problem('{"a": "x"}', {"properties": {"a": {"type": "integer"}}}) == "invalid for the schema (type)"``."""
    try:
        value = json.loads(text)
    except ValueError:
        return "not JSON"
    error = jsonschema.exceptions.best_match(jsonschema.validators.validator_for(schema)(schema).iter_errors(value))
    return None if error is None else f"invalid for the schema ({error.validator})"


def tool_finish_problem(generation: Generation, calls: list[dict], max_tokens: int) -> str | None:
    """What is wrong with a finish_reason of "tool_calls" (vllm#58228): None where it ends a
    completed call (arguments that are JSON), else why not:
    ``tool_finish_problem(Generation("", (1,) * 8, "tool_calls"), [...], 8) == "finish_reason tool_calls at max_tokens"``."""
    if generation.finish_reason != "tool_calls":
        return None
    if generation.ids is not None and len(generation.ids) >= max_tokens:
        return "finish_reason tool_calls at max_tokens"
    if not calls:
        return "finish_reason tool_calls without a call"
    try:
        for call in calls:
            json.loads(call["arguments"])
    except ValueError:
        return "finish_reason tool_calls for an unfinished call"
    return None


@check("tools", "server", minimize="messages", sources=(SERVER,))
def check_server_tools(subject: Subject, case: Case) -> Divergence | None:
    tools, choice = case.input["tools"], case.input["tool_choice"]
    pair, failure = _both(subject, case, tools=tools, tool_choice=choice)
    if failure:
        return failure
    whole, streamed = pair
    expected, actual = _call_view(whole.tool_calls), _call_view(assembled_calls(streamed))
    if expected != actual:
        return Divergence(case, expected, actual, "streamed tool calls differ from the message's",
                          {"request": streamed.request})
    for generation, calls in ((whole, expected), (streamed, actual)):
        problem = tool_finish_problem(generation, calls, case.input["max_tokens"])
        if problem:
            return Divergence(case, "tool_calls for a completed call only", generation.finish_reason, problem,
                              {"stream": bool(generation.chunks), "request": generation.request})
    if whole.finish_reason == LENGTH:
        return None  # cut short: the arguments cannot be complete
    offered = {tool["function"]["name"]: tool["function"].get("parameters", {}) for tool in tools}
    wanted = [choice["function"]["name"]] if isinstance(choice, dict) else list(offered)
    if not expected:
        return Divergence(case, f"a call of {' or '.join(wanted)}", whole.text, "no tool call", {"request": whole.request})
    for call in expected:
        if call["name"] not in wanted:
            return Divergence(case, wanted, call["name"], "called another tool", {"request": whole.request})
        problem = schema_problem(call["arguments"], offered[call["name"]])
        if problem:
            return Divergence(case, offered[call["name"]], call["arguments"], f"arguments {problem}",
                              {"tool": call["name"], "request": whole.request})
    return None


@check("structured", "server", minimize="messages", sources=(SERVER,))
def check_server_structured(subject: Subject, case: Case) -> Divergence | None:
    schema = case.input["schema"]
    response_format = {"type": "json_schema",
                       "json_schema": {"name": case.input.get("schema_name", "schema"), "schema": schema, "strict": True}}
    pair, failure = _both(subject, case, response_format=response_format)
    if failure:
        return failure
    whole, streamed = pair
    if streamed.text != whole.text:
        found = text_divergence(case, whole.text, streamed.text)
        found.kind, found.first_difference["request"] = "streamed content differs from the non-streamed", streamed.request
        return found
    if whole.finish_reason == LENGTH:
        return None  # cut short: the JSON cannot be complete
    problem = schema_problem(whole.text, schema)
    return Divergence(case, schema, whole.text, f"content {problem}", {"request": whole.request}) if problem else None
