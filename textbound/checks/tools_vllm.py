"""vLLM's tool and reasoning parsers as a second oracle of the ``tools`` checks: tool-call formats have
no single Hugging Face truth, and vLLM's parsers are what most users get.

    TEXTBOUND_VLLM_ORACLE_PYTHON=ENV/bin/python textbound check --component tools

``$TEXTBOUND_VLLM_ORACLE_PYTHON`` (PYTHON_ENV) names the python of an environment holding vllm (``nox -s
engine_vllm`` builds one), which runs ``engines/vllm/engine.py`` over the JSON-lines protocol, as
``textbound.adapters.vllm`` does: the parser a server picks for the format, driven as the server
drives it. Unset, vLLM is not consulted. Where impl and the reference agree and vLLM
answers otherwise on the same text, whole (tools/whole) or streamed in the case's deltas
(tools/stream), the case is an oracle disagreement of its own kind (``oracle disagreement: vllm
hermes: call count differs``): reported apart, never failing the run. vLLM raising is such a
disagreement too; its engine dying or hanging is an ``oracle failure``; a format vLLM cannot run
here (its refusal says "not provided: ...") is no opinion. The engine starts while a worker
loads its family (WORKER_SETUP), outside any case's clock: importing vllm takes a minute.

    >>> merged([{"content": "Hi"}, {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{"}}]},
    ...         {"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}])
    {'content': 'Hi', 'reasoning_content': '', 'calls': [{'name': 'f', 'arguments': {}}]}
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable

from ..adapters import EngineMissing, engine_path
from ..adapters import jsonl_engine as protocol
from ..adapters import vllm as vllm_adapter
from ..naming.divergence import ORACLE_DISAGREEMENT, ORACLE_FAILURE, Case, Divergence
from .registry import WORKER_SETUP

PYTHON_ENV = "TEXTBOUND_VLLM_ORACLE_PYTHON"
ANSWER_SECONDS = 60.0  # a parser that answers no request in this long is the oracle's failure
NO_OPINION = "not provided: "  # what the engine's refusal of a format it cannot run says


def engine() -> protocol.EngineProcess | None:
    """This process's vLLM engine for tool parsing, None when $TEXTBOUND_VLLM_ORACLE_PYTHON is unset."""
    python = os.environ.get(PYTHON_ENV, "").strip()
    if not python:
        return None
    return protocol.engine(None, command=[python, str(engine_path(vllm_adapter.ENGINE_SCRIPT)), "--tools-base",
                                          str(vllm_adapter.tools_family())])


WORKER_SETUP.append(engine)


def merged(deltas: list[dict]) -> dict:
    """OpenAI deltas merged as a client does, in the checks' message shape (arguments as JSON values,
    the raw text where they are not JSON)."""
    message = {"content": "", "reasoning_content": ""}
    calls: dict[int, dict] = {}
    for delta in deltas:
        for name in message:
            message[name] += delta.get(name) or ""
        for call in delta.get("tool_calls") or []:
            function = call.get("function") or {}
            into = calls.setdefault(call.get("index", len(calls)), {"name": None, "arguments": ""})
            into["name"] = into["name"] or function.get("name")
            into["arguments"] += function.get("arguments") or ""
    for call in calls.values():
        try:
            call["arguments"] = json.loads(call["arguments"] or "{}")
        except ValueError:
            pass
    return {**message, "calls": [calls[index] for index in sorted(calls)]}


def _whole_message(message: dict) -> dict:
    return {"content": message.get("content") or "", "reasoning_content": message.get("reasoning_content") or "",
            "calls": merged([{"tool_calls": [{**call, "index": index}]} for index, call in
                             enumerate(message.get("tool_calls") or [])])["calls"]}


def _ask(process: protocol.EngineProcess, op: str, **arguments):
    return process.request(op, timeout=ANSWER_SECONDS, **arguments)


def whole(process: protocol.EngineProcess, given) -> dict:
    """vLLM's message for ``given``'s whole text (a tools.ToolInput)."""
    return _whole_message(_ask(process, "parse_response", text=given.text, format=given.format, **given.options))


def streamed(process: protocol.EngineProcess, given) -> dict:
    """vLLM's message for ``given``'s text streamed in its deltas."""
    handle = _ask(process, "parser_new", format=given.format, **given.options)
    try:
        deltas = [d for piece in given.pieces() for d in _ask(process, "parser_feed", handle=handle, text=piece,
                                                               final=False)]
        return merged(deltas + _ask(process, "parser_feed", handle=handle, text="", final=True))
    finally:
        process.release(handle)


def second_opinion(case: Case, given, expected: dict, read: Callable, difference: Callable,
                   what: str = "") -> Divergence | None:
    """The oracle disagreement where vLLM's ``read(process, given)`` differs from ``expected`` (the
    message impl and the reference agree on; ``difference`` is tools.message_difference), else None."""
    process = None
    try:
        process = engine()
        if process is None:
            return None
        answer = read(process, given)
    except (protocol.EngineFailure, EngineMissing) as exc:  # missing: no engines folder (textbound from a wheel)
        return Divergence(case, expected, str(exc), f"{ORACLE_FAILURE} vllm {given.format}: {what}engine failed",
                          {"format": given.format, "oracle": "vllm"})
    except Exception as exc:  # vLLM's own answer: its parser raised
        if NO_OPINION in str(exc):
            return None
        answer = f"{type(exc).__name__}: {exc}"
        found, how = {"raised": type(exc).__name__}, f"raised {type(exc).__name__}"
    else:
        found = difference(expected, answer)
        how = found and f"{found['field']} differs"
    if not found:
        return None
    return Divergence(case, expected, answer, f"{ORACLE_DISAGREEMENT} vllm {given.format}: {what}{how}",
                      {"format": given.format, "splits": given.splits, "oracle": protocol.version_of(process) if process else "vllm",
                       "impl_sides_with": "reference", **found})
