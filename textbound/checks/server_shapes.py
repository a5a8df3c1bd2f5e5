"""Checks of the request shapes servers break on (issue 38), over the wire, against `tokenizers`:
several choices, concurrent requests, logprobs, echo, finish reasons and usage. Every case's output
is steered (server_output.steered) to the shape it was built for (server_cases.output_shapes).

- detokenizer/server_choices: ``n`` of 2 or 3, streamed and not: each choice's text is the oracle's
  decode of its own ids (as server_stream asks of one), its finish_reason as server_finish asks;
  the choices' chunks, routed by index, show each choice's text and nothing of another's.
- detokenizer/server_concurrent: up to ``--server-concurrency`` streamed requests sent at once,
  each consistent with its own ids; where the server is deterministic for a seed (the features
  probe), each equal to the same request sent alone.
- detokenizer/server_logprobs: one entry per id (llama.cpp: per piece of text sent, since it sends
  none for a token ending mid-character); the entries' text is the generation's, by the dialect's
  convention for partial UTF-8 (LOGPROB_CONVENTIONS; vllm#34875).
- detokenizer/server_echo: a completion with ``echo`` shows the prompt's decode, then the output;
  its prompt logprobs have an entry per prompt id, the first None, each naming its id
  (vllm#27477, vllm#58007).
- detokenizer/server_finish: finish_reason "length" exactly when max_tokens ids were generated,
  "stop" for fewer; ``usage`` counts the prompt's ids and the generated ones, streamed and not.

    >>> run_check(subject, Case("detokenizer", "server_choices", "qwen", {"prompt": [9707], "n": 2,
    ...     "max_tokens": 5, "seed": 3, "steer": [127, 102, 636]}))               # doctest: +SKIP
    Divergence(kind='choice 1: shown text the decode changes: ...', ...)
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..naming.divergence import Case, Divergence
from ..plan.implementation import SERVER
from ..server.dialect import Generation
from ..server.features import probe
from .registry import Subject, check, impl_call
from .server_output import LENGTH, completion, decoded, stream_divergence
from .streaming import vocabulary_survey

UTF8_LONGEST = 4  # bytes of the longest UTF-8 character
# How each dialect's logprob entries spell a token ending mid-character: vLLM gives each id its share
# of the decoded text (a character's first bytes "", its last byte the character: vllm#34875's fix);
# llama.cpp sends an entry only with text, its ``bytes`` the text's bytes since the last entry.
LOGPROB_CONVENTIONS = {"vllm": "shares", "llama.cpp": "pieces", "openai": "shares"}


def _send(subject: Subject, case: Case, request) -> tuple[Generation | None, Divergence | None]:
    return impl_call(case, None, lambda: subject.impl.server_dialect.generate(request))


def _located(found: Divergence | None, **where) -> Divergence | None:
    """``found`` saying which choice or request of the case it is of (in its first difference, not
    its kind: one bug gives one signature whichever choice shows it)."""
    if found is not None:
        found.first_difference.update(where)
    return found


def finish_problem(generation: Generation, max_tokens: int) -> str | None:
    """What is wrong with a generation's finish_reason for its ids (no stop strings asked): None, or
    why. "length" exactly when ``max_tokens`` ids came, "stop" when fewer did (an end-of-sequence id):
    ``finish_problem(Generation("", (1, 2), "stop"), 2) == "finish_reason stop after max_tokens ids"``."""
    count, reason = len(generation.ids), generation.finish_reason
    if count > max_tokens:
        return f"{count} ids for max_tokens {max_tokens}"
    if count < max_tokens and reason != "stop":
        return f"finish_reason {reason} before max_tokens ids"
    if count == max_tokens and reason != LENGTH:
        return f"finish_reason {reason} after max_tokens ids"
    return None


def _finish_divergence(case: Case, generation: Generation, max_tokens: int) -> Divergence | None:
    problem = finish_problem(generation, max_tokens)
    if problem:
        return Divergence(case, {"max_tokens": max_tokens, "ids": len(generation.ids)}, generation.finish_reason,
                          problem, {"ids": list(generation.ids), "request": generation.request})
    return None


def _choices(generation: Generation) -> tuple[Generation, ...]:
    return generation.choices or (generation,)


@check("detokenizer", "server_choices", minimize="max_tokens", sources=(SERVER,))
def check_server_choices(subject: Subject, case: Case) -> Divergence | None:
    count = case.input["n"]
    for stream in (False, True):
        answer, failure = _send(subject, case, completion(subject, case.input, stream, n=count))
        if failure:
            return failure
        choices = _choices(answer)
        if len(choices) != count:
            return Divergence(case, count, len(choices), "another number of choices", {"request": answer.request})
        for index, choice in enumerate(choices):
            if stream:
                found = stream_divergence(subject, case, case.input, choice)
            else:
                expected = decoded(subject, case.input, choice)
                found = None if choice.text == expected else Divergence(
                    case, expected, choice.text, "text is not the decode of its ids",
                    {"ids": list(choice.ids), "request": choice.request})
            found = found or _finish_divergence(case, choice, case.input["max_tokens"])
            if found:
                return _located(found, stream=stream, choice=index)
    return None


@check("detokenizer", "server_concurrent", minimize="requests", sources=(SERVER,))
def check_server_concurrent(subject: Subject, case: Case) -> Divergence | None:
    given = case.input["requests"][:subject.cached("concurrency", subject.impl.concurrency)]
    requests = [completion(subject, request, stream=True) for request in given]
    with ThreadPoolExecutor(len(requests)) as pool:
        answers = list(pool.map(lambda request: _send(subject, case, request), requests))
    deterministic = subject.cached("deterministic", lambda: probe(subject.impl.server_dialect, "deterministic") is None)
    for index, ((answer, failure), request, sent) in enumerate(zip(answers, given, requests)):
        if failure:
            return failure
        found = stream_divergence(subject, case, request, answer)
        if found:
            return _located(found, request=index, concurrent=len(requests))
        if not deterministic:
            continue
        alone, failure = _send(subject, case, sent)
        if failure:
            return failure
        if (alone.ids, alone.text) != (answer.ids, answer.text):
            return Divergence(case, {"ids": list(alone.ids), "text": alone.text},
                              {"ids": list(answer.ids), "text": answer.text},
                              "a concurrent request differs from the same request alone",
                              {"request": index, "concurrent": len(requests), "sent": answer.request})
    return None


def _logprob_text(entries, convention: str) -> str:
    """The text a generation's logprob entries spell: their token strings (shares), or their bytes
    decoded as one run (pieces)."""
    if convention == "pieces":
        return b"".join(bytes(entry.bytes or b"") for entry in entries).decode("utf-8", "replace")
    return "".join(entry.token for entry in entries)


def _entry_problem(entries, ids: tuple[int, ...], convention: str) -> str | None:
    """What is wrong with the entries one by one for the dialect's convention, or None."""
    if convention == "shares":
        if len(entries) != len(ids):
            return f"{len(entries)} logprob entries for {len(ids)} ids"
        bad = any(entry.bytes is not None and bytes(entry.bytes) != entry.token.encode() for entry in entries)
        return "an entry's bytes are not its token's" if bad else None
    named = [entry.id for entry in entries]
    position = iter(ids)
    if not all(any(i == token_id for i in position) for token_id in named):  # in order, each an id sent
        return "logprob entries name ids the output has not, or out of order"
    bad = any(not _valid_beginning(entry.token, bytes(entry.bytes or b"")) for entry in entries)
    return "an entry's token is not its bytes' text" if bad else None


def _valid_beginning(token: str, data: bytes) -> bool:
    """Whether ``token`` is llama.cpp's token string for the piece ``data``: its bytes up to a
    character cut off at the end (server-common.cpp validate_utf8), invalid bytes left as the JSON
    answer shows them, U+FFFD: ``_valid_beginning("é", b"\\xc3\\xa9\\xe2")`` is True."""
    return token == data[:_validated_length(data)].decode("utf-8", "replace")


def _validated_length(data: bytes) -> int:
    """llama.cpp's validate_utf8: the length of ``data`` without a multi-byte character cut off at
    its end, judged by the lead bytes among its last four."""
    for back in range(1, min(UTF8_LONGEST, len(data)) + 1):
        byte = data[-back]
        needs = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 0
        if back < needs:
            return len(data) - back
    return len(data)


@check("detokenizer", "server_logprobs", minimize="max_tokens", sources=(SERVER,))
def check_server_logprobs(subject: Subject, case: Case) -> Divergence | None:
    convention = LOGPROB_CONVENTIONS[subject.impl.server_dialect.name]
    for stream in (False, True):
        answer, failure = _send(subject, case, completion(subject, case.input, stream, logprobs=case.input["top_logprobs"]))
        if failure:
            return failure
        if answer.logprobs is None:
            return Divergence(case, "logprobs", None, "no logprobs", {"request": answer.request})
        ids = list(answer.ids)
        if ids and answer.finish_reason == "stop" and ids[-1] in set(vocabulary_survey(subject).special_ids):
            ids = ids[:-1]  # the end-of-sequence id: its entry spells no text
        entries = answer.logprobs[:len(ids)] if convention == "shares" else answer.logprobs
        detail = {"stream": stream, "ids": list(answer.ids), "tokens": [entry.token for entry in answer.logprobs],
                  "request": answer.request}
        problem = _entry_problem(entries, tuple(ids), convention)
        if problem:
            return Divergence(case, len(ids), len(entries), problem, detail)
        spelled = _logprob_text(entries, convention)
        if spelled != answer.text:
            return Divergence(case, answer.text, spelled, f"logprob {'bytes' if convention == 'pieces' else 'tokens'} "
                              "do not spell the text", detail)
    return None


@check("detokenizer", "server_echo", minimize="max_tokens", sources=(SERVER,))
def check_server_echo(subject: Subject, case: Case) -> Divergence | None:
    prompt = list(case.input["prompt"])
    answer, failure = _send(subject, case, completion(subject, case.input, False, echo=True, prompt_logprobs=1))
    if failure:
        return failure
    expected = subject.oracle.decode(prompt, case.input.get("skip_special_tokens", True)) + decoded(subject, case.input, answer)
    if answer.text != expected:
        return Divergence(case, expected, answer.text, "echoed text is not the prompt's decode and the output",
                          {"request": answer.request})
    entries = answer.prompt_logprobs
    named = None if entries is None else [None if entry is None else entry.id for entry in entries]
    if named != [None, *prompt[1:]]:
        return Divergence(case, [None, *prompt[1:]], named, "prompt logprobs do not line up with the prompt ids",
                          {"request": answer.request})
    return None


@check("detokenizer", "server_finish", minimize="max_tokens", sources=(SERVER,))
def check_server_finish(subject: Subject, case: Case) -> Divergence | None:
    prompt_count = len(case.input["prompt"])
    for stream in (False, True):
        answer, failure = _send(subject, case, completion(subject, case.input, stream))
        if failure:
            return failure
        found = _finish_divergence(case, answer, case.input["max_tokens"])
        if found:
            return _located(found, stream=stream)
        if answer.usage is None and not stream:  # a stream may leave usage out: OpenAI sends it when asked
            return Divergence(case, "usage", None, "no usage", {"request": answer.request})
        usage = answer.usage or {}
        counted = {"prompt_tokens": prompt_count, "completion_tokens": len(answer.ids)}
        reported = {key: usage.get(key) for key in counted}
        if answer.usage is not None and reported != counted:
            key = next(key for key in counted if reported[key] != counted[key])
            return Divergence(case, counted, reported, f"usage {key} is not the ids counted",
                              {"stream": stream, "request": answer.request})
    return None
