"""What a running server's text boundary offers, in one shape whatever HTTP API it speaks.

A *dialect* (textbound/server/dialects/: ``vllm``, ``llama_cpp``, ``openai``) turns each operation
below into that API's requests and its answers back into these types. The checks (the server's
case builders and properties) and the ``--impl`` adapter of a server (textbound.adapters.server)
see only this module: a dialect lacking an operation raises ``NotProvided`` and the properties
needing it are reported "not provided", never passed. A server that misbehaves (a timeout, a
closed connection, a status other than 200, invalid JSON, half an SSE event, a body over the size
limit, a redirect) raises ``ServerError`` carrying the exact request, which a check records as a
divergence of kind "server error: <what>" and the run counts.

    >>> dialect = open_dialect("vllm", "http://127.0.0.1:8000", model="m")     # doctest: +SKIP
    >>> dialect.tokenize("Hi there", add_special_tokens=False)                 # doctest: +SKIP
    [13048, 1052]
    >>> g = dialect.generate(GenerationRequest(prompt=[13048], max_tokens=4, seed=1, stream=True))  # doctest: +SKIP
    >>> g.text == "".join(chunk.text for chunk in g.chunks), g.finish_reason   # doctest: +SKIP
    (True, 'length')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

DIALECTS = ("vllm", "llama.cpp", "openai")


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


class Dialect(Protocol):
    """One server, reached over one HTTP API. Every method may raise NotProvided or ServerError."""

    name: str  # one of DIALECTS

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]: ...

    def detokenize(self, ids: list[int]) -> str: ...

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        """The prompt ids the server renders and tokenizes for a chat (vLLM: POST /tokenize with messages)."""

    def chat_text(self, messages: list[dict], *, tools: list[dict] | None = None,
                  add_generation_prompt: bool = True) -> str:
        """The prompt text the server renders for a chat (llama.cpp: POST /apply-template)."""

    def chat_template(self) -> str:
        """The source of the chat template the server renders with (llama.cpp: GET /props), so a
        check of chat text knows which template's text the server's is."""

    def generate(self, request: GenerationRequest) -> Generation: ...


def open_dialect(name: str, url: str, *, model: str | None = None, timeout: float = 30.0) -> Dialect:
    """The dialect ``name`` talking to ``url`` (and only to it); ValueError for an unknown name."""
    if name == "vllm":
        from .dialects.vllm import VllmDialect
        return VllmDialect(url, model=model, timeout=timeout)
    if name == "llama.cpp":
        from .dialects.llama_cpp import LlamaCppDialect
        return LlamaCppDialect(url, model=model, timeout=timeout)
    if name == "openai":
        from .dialects.openai import OpenAIDialect
        return OpenAIDialect(url, model=model, timeout=timeout)
    raise ValueError(f"unknown server dialect {name!r} (known: {', '.join(DIALECTS)})")
