"""A running server as an ``--impl``: its tokenizer and chat prompt reached over HTTP.

Configured by environment variables only, so the pool's worker processes rebuild it from the
module's name:

- ``TEXTBOUND_SERVER_URL`` (required): the server, e.g. ``http://127.0.0.1:8000``; nothing else is
  contacted;
- ``TEXTBOUND_SERVER_DIALECT``: ``vllm`` (the default), ``llama.cpp``, ``openai``,
  ``llama-cpp-python``, ``dynamo`` or ``transformers-serve`` (textbound.server.dialect.DIALECTS);
- ``TEXTBOUND_SERVER_MODEL``: the ``model`` field of requests (default: none, the server's only model);
- ``TEXTBOUND_SERVER_TIMEOUT``: seconds per request (default 30);
- ``TEXTBOUND_SERVER_CONCURRENCY``: streamed requests sent at once by detokenizer/server_concurrent
  (2 to 8; default: the server's slots where its dialect tells them, else 4).

Importing it asks the server for its version (``GET /version``, else ``GET /v1/models``), so a
server that cannot be reached fails the run's setup with one line. What the server offers:

- ``Tokenizer.from_dir(path)`` (the family folder is the oracle's; the server tokenizes):
  ``encode`` is the dialect's tokenize, ``decode`` its detokenize (``skip_special_tokens=True``:
  NotProvided, as /detokenize has no such option), ``apply_chat_template(..., tokenize=True)`` its
  chat ids (another template, documents, sanitized control tokens, a dict or masks: NotProvided).
  The vocabulary (``token_to_id``, ``vocab_size``) is not exposed by any dialect, so those names
  are left out; ``id_to_token`` names ids in divergence reports only, read from the family
  folder's tokenizer.json (it is never compared);
- ``render_chat`` where the dialect renders chat text (llama.cpp), for the server's own template only;
- ``dialect()``: the configured textbound.server.dialect.Dialect, for the server's output-side checks.

A misbehaving server raises textbound.server.ServerError out of these calls, with the request.

    TEXTBOUND_SERVER_URL=http://127.0.0.1:8000 textbound check --impl textbound.adapters.server \\
        --family qwen3 --component tokenizer

Server entry point: the server itself, over HTTP (the dialect's tokenize, detokenize, template and
chat-completion endpoints): every pre- and post-step is the server's own.

    >>> Tokenizer.from_dir("models/qwen3").encode("Hi there")              # doctest: +SKIP
    [13048, 1052]
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..server.client import ServerClient
from ..server.dialect import CONCURRENCY_RANGE, Dialect, NotProvided, ServerError, open_dialect

URL_VARIABLE = "TEXTBOUND_SERVER_URL"
# The variables a chat render case passes that a server takes from its own model: the tokenizer's
# special tokens (transformers gives them to every template).
SPECIAL_TOKEN_VARIABLES = frozenset({"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
                                     "mask_token"})
DIALECT_VARIABLE = "TEXTBOUND_SERVER_DIALECT"
MODEL_VARIABLE = "TEXTBOUND_SERVER_MODEL"
TIMEOUT_VARIABLE = "TEXTBOUND_SERVER_TIMEOUT"
CONCURRENCY_VARIABLE = "TEXTBOUND_SERVER_CONCURRENCY"
DEFAULT_CONCURRENCY = 4  # where the server does not tell its slots
DEFAULT_DIALECT = "vllm"
DEFAULT_TIMEOUT = 30.0
# The dialects whose server renders a chat's text (Dialect.chat_text), so render_chat is offered.
CHAT_TEXT_DIALECTS = ("llama.cpp",)


class ServerNotConfigured(ImportError):
    """The environment does not say which server to check."""


def _timeout() -> float:
    text = os.environ.get(TIMEOUT_VARIABLE, "")
    try:
        timeout = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        raise ServerNotConfigured(f"{TIMEOUT_VARIABLE}={text!r} is not a number of seconds") from None
    if not timeout > 0:
        raise ServerNotConfigured(f"{TIMEOUT_VARIABLE}={text!r} must be positive")
    return timeout


def _concurrency() -> int | None:
    """``$TEXTBOUND_SERVER_CONCURRENCY`` as a number, None where it is not set."""
    text = os.environ.get(CONCURRENCY_VARIABLE, "")
    low, high = CONCURRENCY_RANGE
    if not text:
        return None
    if not (text.isdigit() and low <= int(text) <= high):
        raise ServerNotConfigured(f"{CONCURRENCY_VARIABLE}={text!r} must be a whole number from {low} to {high}")
    return int(text)


def _open() -> tuple[Dialect, str]:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        raise ServerNotConfigured(f"set {URL_VARIABLE} to the server's URL (http://host:port)")
    name = os.environ.get(DIALECT_VARIABLE) or DEFAULT_DIALECT
    model, timeout = os.environ.get(MODEL_VARIABLE) or None, _timeout()
    try:
        opened = open_dialect(name, url, model=model, timeout=timeout)
    except ValueError as exc:
        raise ServerNotConfigured(f"{DIALECT_VARIABLE} or {URL_VARIABLE}: {exc}") from None
    return opened, _server_version(ServerClient(url, timeout=timeout), name, url)


def _server_version(client: ServerClient, name: str, url: str) -> str:
    """``"vllm server 0.33.0 at http://..."``: the server's /version, else its first model's name."""
    try:
        version = client.get_json("/version").get("version")
    except ServerError:
        version = None
    if not isinstance(version, str):
        models = client.get_json("/v1/models").get("data") or [{}]
        version = f"serving {models[0].get('id', 'an unnamed model') if isinstance(models[0], dict) else '?'}"
    return f"{name} server {version} at {url}"


_CONCURRENCY = _concurrency()
_DIALECT, __version__ = _open()


def concurrency() -> int:
    """Streamed requests the server gets at once: ``$TEXTBOUND_SERVER_CONCURRENCY``, else its slots
    where the dialect tells them (within CONCURRENCY_RANGE), else DEFAULT_CONCURRENCY."""
    if _CONCURRENCY:
        return _CONCURRENCY
    try:
        slots = _DIALECT.slots()
    except (ServerError, NotProvided):
        slots = None
    low, high = CONCURRENCY_RANGE
    return min(max(slots or DEFAULT_CONCURRENCY, low), high)


def dialect() -> Dialect:
    """The server under test, as its dialect (the configured URL, model and timeout)."""
    return _DIALECT


class Tokenizer:
    """The server's tokenizer, behind impl's Tokenizer names (see the module docstring)."""

    def __init__(self, path: Path):
        self.path = path
        self._tokens: list[str | None] | None = None

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(Path(path))

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, not {type(text).__name__}")
        return _DIALECT.tokenize(text, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        if skip_special_tokens:
            raise NotProvided(f"{_DIALECT.name}: detokenize keeps special tokens (no skip_special_tokens)")
        return _DIALECT.detokenize(list(ids))

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None,
                            add_generation_prompt=False, continue_final_message=False, tokenize=True,
                            sanitize_control_tokens=False, return_dict=True, return_assistant_tokens_mask=False,
                            **kwargs) -> list[int]:
        """The server's prompt ids for a chat rendered with its own template (return_dict=False only)."""
        asked = {"tokenize=False": not tokenize, "documents": documents is not None,
                 "chat_template": chat_template is not None, "sanitize_control_tokens": sanitize_control_tokens,
                 "return_dict=True": return_dict, "return_assistant_tokens_mask": return_assistant_tokens_mask}
        lacking = [name for name, wanted in asked.items() if wanted]
        if lacking:
            raise NotProvided(f"{_DIALECT.name}: the server's chat prompt has no {', '.join(lacking)}")
        return _DIALECT.chat_ids(conversation, tools=tools, add_generation_prompt=add_generation_prompt,
                                 continue_final_message=continue_final_message, chat_template_kwargs=kwargs or None)

    def id_to_token(self, token_id: int) -> str | None:
        """The family folder's name for an id (for reports; the server is not asked)."""
        if self._tokens is None:
            self._tokens = _vocabulary_names(self.path / "tokenizer.json")
        return self._tokens[token_id] if isinstance(token_id, int) and 0 <= token_id < len(self._tokens) else None


def _vocabulary_names(path: Path) -> list[str | None]:
    """Each id's token in a tokenizer.json (model vocabulary and added tokens), None for gaps."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    vocab = spec.get("model", {}).get("vocab") or {}
    pairs = ([(token, token_id) for token_id, (token, *_) in enumerate(vocab)] if isinstance(vocab, list)
             else list(vocab.items()))
    pairs += [(added["content"], added["id"]) for added in spec.get("added_tokens") or ()]
    names: list[str | None] = [None] * (max((token_id for _, token_id in pairs), default=-1) + 1)
    for token, token_id in pairs:
        names[token_id] = token
    return names


if _DIALECT.name in CHAT_TEXT_DIALECTS:
    def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                    continue_final_message=False, **variables) -> str:
        """The chat text the server renders, for its own template only (Dialect.chat_template)."""
        if template != _DIALECT.chat_template():
            raise NotProvided(f"{_DIALECT.name}: the server renders only its own chat template")
        # The special-token variables are the family's, which the server takes from its own model
        # file (where they differ, the texts differ); the others are the template's own arguments.
        if documents is not None or continue_final_message:
            raise NotProvided(f"{_DIALECT.name}: the server's chat text has no documents or continue_final_message")
        arguments = {name: value for name, value in variables.items() if name not in SPECIAL_TOKEN_VARIABLES}
        return _DIALECT.chat_text(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                  chat_template_kwargs=arguments or None)
