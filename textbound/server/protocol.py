"""The types a server's answers come in, whatever its dialect (textbound.server.dialect).

    >>> Generation(text="Hi", ids=(13048,), finish_reason="length").ids
    (13048,)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class NotProvided(Exception):
    """The dialect has no such operation (or the server answered that it lacks the feature)."""


class ServerError(Exception):
    """The server misbehaved on one request: ``what`` names how, in a few words ("timeout after 30 s",
    "status 500", "invalid JSON at byte 12", "half an SSE event", "body over 16 MB", "redirect to
    http://elsewhere"); ``request`` is the exact request, ``{"method", "path", "body"}``, to re-send."""

    def __init__(self, what: str, request: dict):
        super().__init__(f"{what}: {request.get('method', 'POST')} {request.get('path')}")
        self.what, self.request = what, request


@dataclass(frozen=True)
class Chunk:
    """One streamed event's share of the output: the content it shows and the token ids it carries."""

    text: str
    ids: tuple[int, ...] | None = None  # None where the dialect does not return ids per chunk
    reasoning: str = ""
    tool_call_deltas: tuple[dict, ...] = ()  # OpenAI ``delta.tool_calls`` entries, as sent


@dataclass(frozen=True)
class GenerationRequest:
    """What to generate. Exactly one of ``prompt`` (text or ids: a completion) and ``messages`` (a chat
    completion). Sampling is seeded so the same request gives the same output streamed or not."""

    prompt: str | list[int] | None = None
    messages: list[dict] | None = None
    max_tokens: int = 16
    seed: int = 0
    temperature: float = 1.0
    stop: tuple[str, ...] = ()
    include_stop_str_in_output: bool = False  # vLLM's extension; NotProvided where a dialect lacks it
    skip_special_tokens: bool = True
    stream: bool = False
    tools: list[dict] | None = None
    tool_choice: Any = None  # "required", {"type": "function", "function": {"name": ...}}, ...
    response_format: dict | None = None  # {"type": "json_schema", "json_schema": {...}}
    chat_template_kwargs: dict | None = None
    # Steering: generate only these ids, asked by ``steer_by`` (STEERING: "allowed_token_ids", vLLM's
    # own field, or "logit_bias", OpenAI's, +100 on each); nothing sent where either is empty.
    steer: tuple[int, ...] = ()
    steer_by: str | None = None
    n: int = 1  # choices per request
    logprobs: int | None = None  # top logprobs per generated token (0: the chosen token's only)
    echo: bool = False  # completions: the prompt's text before the generated text
    prompt_logprobs: int | None = None  # completions (vLLM): an entry per prompt token


# The ways a request can steer the model to a set of ids, as GenerationRequest.steer_by names them.
STEERING = ("allowed_token_ids", "logit_bias")
# Streamed requests sent at once to check concurrency (--server-concurrency): two at least, since one
# alone is no concurrency, and up to eight.
CONCURRENCY_RANGE = (2, 8)
STEERING_BIAS = 100  # the largest bias OpenAI's API (and vLLM, which clamps) takes


@dataclass(frozen=True)
class Logprob:
    """One token's logprob entry as the server sent it: its token string, its ``bytes`` (None where
    the dialect sends none) and its id where the dialect names it (vLLM's "token_id:123" strings)."""

    token: str
    bytes: tuple[int, ...] | None = None
    id: int | None = None


@dataclass(frozen=True)
class Generation:
    """One generation as the server returned it, streamed or not."""

    text: str  # the content (streamed: the concatenated content deltas)
    ids: tuple[int, ...] | None  # the generated ids, where the dialect returns them
    finish_reason: str | None
    stop_reason: str | int | None = None  # vLLM: the stop string or id that ended it
    reasoning: str = ""
    tool_calls: tuple[dict, ...] = ()  # OpenAI ``message.tool_calls`` (streamed: assembled from deltas)
    chunks: tuple[Chunk, ...] = ()  # streamed only, in order
    prompt_ids: tuple[int, ...] | None = None  # where the dialect returns the prompt's ids
    request: dict = field(default_factory=dict)  # the exact request sent, for replay
    choices: tuple["Generation", ...] = ()  # with n > 1: every choice by index (this one is the first)
    logprobs: tuple[Logprob, ...] | None = None  # per generated token, where asked and sent
    prompt_logprobs: tuple[Logprob | None, ...] | None = None  # per prompt token (vLLM: None for the first)
    usage: dict | None = None  # prompt_tokens, completion_tokens (whole request)
    # Streamed: the end event the API promises (OpenAI's "[DONE]") where the stream ended at the
    # body's end without it and the dialect read it anyway (transformers-serve); None otherwise.
    missing_end: str | None = None
