"""The OpenAI API's dialect: ``POST /v1/chat/completions`` only, streamed and not, without token ids.

What the public API offers is checked (streamed = non-streamed, stops, tool calls, JSON output);
tokenize, detokenize, chat ids and chat text, completions of a prompt and vLLM's extensions
(``include_stop_str_in_output``, ``skip_special_tokens=False``, ``chat_template_kwargs``) are
``NotProvided``. The request building and answer reading here are shared with the vllm dialect,
which is this API plus vLLM's extensions (textbound/server/dialects/vllm.py).

    >>> dialect = OpenAIDialect("http://127.0.0.1:8000", model="m")               # doctest: +SKIP
    >>> g = dialect.generate(GenerationRequest(messages=[{"role": "user", "content": "Hi"}], stream=True))  # doctest: +SKIP
    >>> g.text == "".join(c.text for c in g.chunks), g.ids                         # doctest: +SKIP
    (True, None)
"""
from __future__ import annotations

from textbound.impl.tools import assemble

from ..client import ServerClient
from ..protocol import Chunk, Generation, GenerationRequest, NotProvided, ServerError

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


class OpenAIDialect:
    """A server speaking the OpenAI chat-completions API at ``url``."""

    name = "openai"
    offers_completions = False  # POST /v1/completions (of a prompt): vLLM's and llama-cpp-python's

    def __init__(self, url: str, *, model: str | None = None, timeout: float = 30.0):
        self.client = ServerClient(url, timeout=timeout)
        self.model = model

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        raise NotProvided(f"{self.name}: no tokenize endpoint")

    def detokenize(self, ids: list[int]) -> str:
        raise NotProvided(f"{self.name}: no detokenize endpoint")

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        raise NotProvided(f"{self.name}: no endpoint tokenizes a chat")

    def chat_text(self, messages: list[dict], *, tools: list[dict] | None = None,
                  add_generation_prompt: bool = True, chat_template_kwargs: dict | None = None) -> str:
        raise NotProvided(f"{self.name}: no endpoint renders a chat's text")

    def chat_template(self) -> str:
        raise NotProvided(f"{self.name}: no endpoint names the chat template")

    def generate(self, request: GenerationRequest) -> Generation:
        """The server's generation for ``request``, streamed or not (see dialect.Generation)."""
        path, body = self.request_body(request)
        sent = {"method": "POST", "path": path, "body": body}
        if request.stream:
            return _streamed(self.client.stream(path, body), path == CHAT_PATH, sent)
        return _whole(self.client.post_json(path, body), path == CHAT_PATH, sent)

    def request_body(self, request: GenerationRequest) -> tuple[str, dict]:
        """The path and JSON body that ask this server for ``request``."""
        if (request.prompt is None) == (request.messages is None):
            raise ValueError("a GenerationRequest needs exactly one of prompt and messages")
        chat = request.messages is not None
        if not chat and not self.offers_completions:
            raise NotProvided(f"{self.name}: only chat completions")
        body = self.model_field()
        body.update({"messages" if chat else "prompt": request.messages if chat else request.prompt,
                     "max_tokens": request.max_tokens, "seed": request.seed,
                     "temperature": request.temperature, "stream": request.stream})
        optional = {"stop": list(request.stop) or None, "tools": request.tools, "tool_choice": request.tool_choice,
                    "response_format": request.response_format}
        body.update({key: value for key, value in optional.items() if value is not None})
        body.update(self.extension_fields(request, chat))
        return (CHAT_PATH if chat else COMPLETIONS_PATH), body

    def model_field(self) -> dict:
        """The ``model`` field of a request: the model named, or none (the server's only model)."""
        return {"model": self.model} if self.model else {}

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        """The request fields beyond the OpenAI API's; the public API has none."""
        lacking = [name for name, asked in (("include_stop_str_in_output", request.include_stop_str_in_output),
                                            ("skip_special_tokens=False", not request.skip_special_tokens),
                                            ("chat_template_kwargs", request.chat_template_kwargs is not None))
                   if asked]
        if lacking:
            raise NotProvided(f"{self.name}: no {', '.join(lacking)}")
        return {}


def _whole(answer: dict, chat: bool, sent: dict) -> Generation:
    choice = _first_choice(answer, sent)
    if chat:
        message = _typed(choice.get("message"), dict, "choices[0].message", sent)
        text = _typed(message.get("content") or "", str, "choices[0].message.content", sent)
        reasoning = _typed(message.get("reasoning") or message.get("reasoning_content") or "", str,
                           "choices[0].message.reasoning", sent)
        calls = tuple(_typed(message.get("tool_calls") or [], list, "choices[0].message.tool_calls", sent))
        prompt_ids = answer.get("prompt_token_ids")
    else:
        text = _typed(choice.get("text"), str, "choices[0].text", sent)
        reasoning, calls, prompt_ids = "", (), choice.get("prompt_token_ids")
    return Generation(text=text, ids=_ids(choice.get("token_ids"), "choices[0].token_ids", sent),
                      finish_reason=choice.get("finish_reason"), stop_reason=choice.get("stop_reason"),
                      reasoning=reasoning, tool_calls=calls,
                      prompt_ids=_ids(prompt_ids, "prompt_token_ids", sent), request=sent)


def _streamed(events, chat: bool, sent: dict) -> Generation:
    chunks: list[Chunk] = []
    finish_reason = stop_reason = prompt_ids = None
    for number, event in enumerate(events, start=1):
        where = f"SSE event {number}"
        if "error" in event:
            raise ServerError(f"error in {where}: {str(event['error'])[:200]}", sent)
        if prompt_ids is None and event.get("prompt_token_ids") is not None:
            prompt_ids = _ids(event["prompt_token_ids"], f"{where} prompt_token_ids", sent)
        choices = _typed(event.get("choices") or [], list, f"{where} choices", sent)
        if not choices:  # a usage-only event
            continue
        choice = _typed(choices[0], dict, f"{where} choices[0]", sent)
        if prompt_ids is None and choice.get("prompt_token_ids") is not None:
            prompt_ids = _ids(choice["prompt_token_ids"], f"{where} prompt_token_ids", sent)
        chunks.append(_chunk(choice, chat, where, sent))
        if choice.get("finish_reason") is not None:
            finish_reason, stop_reason = choice["finish_reason"], choice.get("stop_reason")
    with_ids = [chunk.ids for chunk in chunks if chunk.ids is not None]
    deltas = [{"tool_calls": list(chunk.tool_call_deltas)} for chunk in chunks if chunk.tool_call_deltas]
    try:
        calls = tuple(assemble(deltas).get("tool_calls", ()))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ServerError(f"tool-call deltas are malformed: {type(exc).__name__}: {exc}", sent) from None
    return Generation(text="".join(chunk.text for chunk in chunks),
                      ids=tuple(i for ids in with_ids for i in ids) if with_ids else None,
                      finish_reason=finish_reason, stop_reason=stop_reason,
                      reasoning="".join(chunk.reasoning for chunk in chunks), tool_calls=calls,
                      chunks=tuple(chunks), prompt_ids=prompt_ids, request=sent)


def _chunk(choice: dict, chat: bool, where: str, sent: dict) -> Chunk:
    ids = _ids(choice.get("token_ids"), f"{where} token_ids", sent)
    if not chat:
        return Chunk(text=_typed(choice.get("text") or "", str, f"{where} text", sent), ids=ids)
    delta = _typed(choice.get("delta") or {}, dict, f"{where} delta", sent)
    calls = _typed(delta.get("tool_calls") or [], list, f"{where} delta.tool_calls", sent)
    return Chunk(text=_typed(delta.get("content") or "", str, f"{where} delta.content", sent), ids=ids,
                 reasoning=_typed(delta.get("reasoning") or delta.get("reasoning_content") or "", str,
                                  f"{where} delta.reasoning", sent),
                 tool_call_deltas=tuple(calls))


def _first_choice(answer: dict, sent: dict) -> dict:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ServerError("the answer has no choices", sent)
    return _typed(choices[0], dict, "choices[0]", sent)


def _typed(value, kind: type, where: str, sent: dict):
    """``value`` if it is a ``kind``; else the answer is malformed: ServerError naming ``where``."""
    if not isinstance(value, kind):
        raise ServerError(f"{where} is {type(value).__name__}, not {kind.__name__}", sent)
    return value


def ids_field(value, where: str, sent: dict) -> list[int]:
    """A list of token ids the server answered; ServerError naming ``where`` if it is not one.

    >>> ids_field([1, 2], "tokens", {})
    [1, 2]
    """
    ids = _ids(value, where, sent)
    if ids is None:
        raise ServerError(f"{where} is missing", sent)
    return list(ids)


def _ids(value, where: str, sent: dict) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ServerError(f"{where} is not a list of token ids", sent)
    return tuple(value)
