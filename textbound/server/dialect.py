"""What a running server's text boundary offers, in one shape whatever HTTP API it speaks.

A *dialect* (textbound/server/dialects/: ``vllm``, ``llama_cpp``, ``openai``, ``llama_cpp_python``,
``dynamo``, ``transformers_serve``, ``smg``) turns each operation below into that API's requests and its
answers back into these types. The checks (the server's case builders and properties) and the ``--impl`` adapter of a server (textbound.adapters.server)
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

from typing import Protocol

# The types every dialect answers in live in a leaf module, so the dialects need not import this
# one (which imports them).
from .protocol import (CONCURRENCY_RANGE, STEERING, Chunk, Generation, GenerationRequest, Logprob, NotProvided,
                       ServerError)

DIALECTS = ("vllm", "llama.cpp", "openai", "llama-cpp-python", "dynamo", "transformers-serve", "smg")
__all__ = ["CONCURRENCY_RANGE", "DIALECTS", "STEERING", "Chunk", "Dialect", "Generation", "GenerationRequest", "Logprob",
           "NotProvided", "ServerError", "open_dialect"]


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
                  add_generation_prompt: bool = True, chat_template_kwargs: dict | None = None) -> str:
        """The prompt text the server renders for a chat (llama.cpp: POST /apply-template)."""

    def chat_template(self) -> str:
        """The source of the chat template the server renders with (llama.cpp: GET /props), so a
        check of chat text knows which template's text the server's is."""

    def generate(self, request: GenerationRequest) -> Generation: ...

    def slots(self) -> int | None:
        """How many requests the server runs at once, where its API tells (llama.cpp's /props), else None."""

    steering: tuple[str, ...]  # the ways (protocol.STEERING) this API can steer sampling, in the order tried


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
    if name == "llama-cpp-python":
        from .dialects.llama_cpp_python import LlamaCppPythonDialect
        return LlamaCppPythonDialect(url, model=model, timeout=timeout)
    if name == "dynamo":
        from .dialects.dynamo import DynamoDialect
        return DynamoDialect(url, model=model, timeout=timeout)
    if name == "transformers-serve":
        from .dialects.transformers_serve import TransformersServeDialect
        return TransformersServeDialect(url, model=model, timeout=timeout)
    if name == "smg":
        from .dialects.smg import SmgDialect
        return SmgDialect(url, model=model, timeout=timeout)
    raise ValueError(f"unknown server dialect {name!r} (known: {', '.join(DIALECTS)})")
