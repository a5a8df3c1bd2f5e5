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

from dataclasses import replace

from textbound.impl.tools import assemble

from ..client import ServerClient
from ..protocol import STEERING_BIAS, Chunk, Generation, GenerationRequest, Logprob, NotProvided, ServerError

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


class OpenAIDialect:
    """A server speaking the OpenAI chat-completions API at ``url``."""

    name = "openai"
    offers_completions = False  # POST /v1/completions (of a prompt): vLLM's and llama-cpp-python's
    # vLLM's request extensions (return_token_ids, echo, prompt logprobs and the rest).
    vllm_extensions = False
    # How this API can steer sampling to a set of ids (protocol.STEERING), in the order tried.
    steering = ("logit_bias",)
    # A stream must end with ``data: [DONE]``; else it is read to the body's end and the generation
    # names the end event it lacked (Generation.missing_end).
    done_required = True

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

    def slots(self) -> int | None:
        """How many requests the server runs at once, where the API tells (it does not)."""
        return None

    def generate(self, request: GenerationRequest) -> Generation:
        """The server's generation for ``request``, streamed or not (see dialect.Generation)."""
        path, body = self.request_body(request)
        sent = {"method": "POST", "path": path, "body": body}
        if request.stream:
            return _streamed(self.client.stream(path, body, done_required=self.done_required), path == CHAT_PATH, sent)
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
        if request.stream:
            body["stream_options"] = {"include_usage": True}
        body.update(self.shape_fields(request, chat))
        body.update(self.extension_fields(request, chat))
        return (CHAT_PATH if chat else COMPLETIONS_PATH), body

    def shape_fields(self, request: GenerationRequest, chat: bool) -> dict:
        """The request's shape in the API's fields: steering, ``n``, logprobs, echo.

        >>> OpenAIDialect("http://h:1").shape_fields(GenerationRequest(messages=[], steer=(5, 7),
        ...     steer_by="logit_bias", n=2, logprobs=1), chat=True)
        {'logit_bias': {'5': 100, '7': 100}, 'n': 2, 'logprobs': True, 'top_logprobs': 1}
        """
        fields: dict = {}
        if request.steer and request.steer_by:
            if request.steer_by not in self.steering:
                raise NotProvided(f"{self.name}: no {request.steer_by} steering")
            fields.update(steering_fields(request))
        if request.n != 1:
            fields["n"] = request.n
        if request.logprobs is not None:
            fields.update({"logprobs": True, "top_logprobs": request.logprobs} if chat else {"logprobs": request.logprobs})
        if request.echo or request.prompt_logprobs is not None:
            if chat or not self.vllm_extensions:
                raise NotProvided(f"{self.name}: echo and prompt logprobs are for completions (vLLM)")
            fields["echo"] = request.echo
            if request.prompt_logprobs is not None:
                fields["prompt_logprobs"] = request.prompt_logprobs
        return fields

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


def steering_fields(request: GenerationRequest) -> dict:
    """``allowed_token_ids`` (vLLM) or ``logit_bias`` (OpenAI: token id strings to a bias) for
    ``request.steer``."""
    if request.steer_by == "allowed_token_ids":
        return {"allowed_token_ids": list(request.steer)}
    return {"logit_bias": {str(i): STEERING_BIAS for i in request.steer}}


def _whole(answer: dict, chat: bool, sent: dict) -> Generation:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ServerError("the answer has no choices", sent)
    generations = [_whole_choice(answer, _typed(choice, dict, f"choices[{n}]", sent), chat, f"choices[{n}]", sent)
                   for n, choice in enumerate(choices)]
    usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else None
    return _with_choices(generations, usage)


def _with_choices(generations: list[Generation], usage: dict | None, missing_end: str | None = None) -> Generation:
    """The first choice carrying every choice (where there are several), the request's usage and
    the end event its stream lacked."""
    first = replace(generations[0], usage=usage, missing_end=missing_end)
    return replace(first, choices=tuple([first, *generations[1:]])) if len(generations) > 1 else first


def _whole_choice(answer: dict, choice: dict, chat: bool, where: str, sent: dict) -> Generation:
    if chat:
        message = _typed(choice.get("message"), dict, f"{where}.message", sent)
        text = _typed(message.get("content") or "", str, f"{where}.message.content", sent)
        reasoning = _typed(message.get("reasoning") or message.get("reasoning_content") or "", str,
                           f"{where}.message.reasoning", sent)
        calls = tuple(_typed(message.get("tool_calls") or [], list, f"{where}.message.tool_calls", sent))
        prompt_ids = answer.get("prompt_token_ids")
    else:
        text = _typed(choice.get("text"), str, f"{where}.text", sent)
        reasoning, calls, prompt_ids = "", (), choice.get("prompt_token_ids")
    return Generation(text=text, ids=_ids(choice.get("token_ids"), f"{where}.token_ids", sent),
                      finish_reason=choice.get("finish_reason"), stop_reason=choice.get("stop_reason"),
                      reasoning=reasoning, tool_calls=calls,
                      prompt_ids=_ids(prompt_ids, "prompt_token_ids", sent), request=sent,
                      logprobs=logprob_entries(choice.get("logprobs"), chat, f"{where}.logprobs", sent),
                      prompt_logprobs=_prompt_logprobs(choice.get("prompt_logprobs"), f"{where}.prompt_logprobs", sent))


def logprob_entries(value, chat: bool, where: str, sent: dict) -> tuple[Logprob, ...] | None:
    """A choice's (or a chunk's) ``logprobs`` as entries: chat's ``content`` list of ``{token, bytes}``,
    completions' ``tokens`` list (no bytes).

    >>> logprob_entries({"content": [{"token": "é", "bytes": [195, 169], "logprob": -1.0}]}, True, "", {})
    (Logprob(token='é', bytes=(195, 169), id=None),)
    """
    if value is None:
        return None
    value = _typed(value, dict, where, sent)
    if not chat:
        tokens = _typed(value.get("tokens") or [], list, f"{where}.tokens", sent)
        return tuple(Logprob(_typed(token, str, f"{where}.tokens[{n}]", sent)) for n, token in enumerate(tokens))
    entries = []
    for n, entry in enumerate(_typed(value.get("content") or [], list, f"{where}.content", sent)):
        entry = _typed(entry, dict, f"{where}.content[{n}]", sent)
        data = entry.get("bytes")
        if data is not None and not (isinstance(data, list) and all(isinstance(b, int) and 0 <= b < 256 for b in data)):
            raise ServerError(f"{where}.content[{n}].bytes is not a list of bytes", sent)
        entries.append(Logprob(_typed(entry.get("token"), str, f"{where}.content[{n}].token", sent),
                               None if data is None else tuple(data)))
    return tuple(entries)


def _prompt_logprobs(value, where: str, sent: dict) -> tuple[Logprob | None, ...] | None:
    """vLLM's ``prompt_logprobs``: per prompt token None (the first) or ``{"<id>": {decoded_token, ...}}``
    holding the prompt's own id among the top ones; each entry is the prompt's own id's."""
    if value is None:
        return None
    entries: list[Logprob | None] = []
    for n, entry in enumerate(_typed(value, list, where, sent)):
        if entry is None:
            entries.append(None)
            continue
        entry = _typed(entry, dict, f"{where}[{n}]", sent)
        ids = [int(key) for key in entry if str(key).lstrip("-").isdigit()]
        # The prompt's own token is the one the server ranks by the prompt, not by the top-k: vLLM puts it first.
        first = next(iter(entry), None)
        token = entry[first].get("decoded_token") if first is not None and isinstance(entry[first], dict) else None
        entries.append(Logprob(token if isinstance(token, str) else "", None, ids[0] if ids else None))
    return tuple(entries)


def _streamed(events, chat: bool, sent: dict) -> Generation:
    """The stream's choices (events' ``choices`` entries routed by their ``index``), each assembled;
    the end event the stream lacked (what ``events`` returns: ServerClient.stream) on the first."""
    per_choice: dict[int, dict] = {}
    prompt_ids = usage = None
    stream = _Ending(events)
    for number, event in enumerate(stream, start=1):
        where = f"SSE event {number}"
        if "error" in event:
            raise ServerError(f"error in {where}: {str(event['error'])[:200]}", sent)
        if prompt_ids is None and event.get("prompt_token_ids") is not None:
            prompt_ids = _ids(event["prompt_token_ids"], f"{where} prompt_token_ids", sent)
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        for choice in _typed(event.get("choices") or [], list, f"{where} choices", sent):  # none: a usage-only event
            choice = _typed(choice, dict, f"{where} choices[]", sent)
            index = choice.get("index", 0)
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise ServerError(f"{where} choices[].index is {index!r}, not a choice's number", sent)
            state = per_choice.setdefault(index, {"chunks": [], "finish": (None, None), "prompt_ids": None,
                                                  "logprobs": None, "prompt_logprobs": None})
            if state["prompt_ids"] is None and choice.get("prompt_token_ids") is not None:
                state["prompt_ids"] = _ids(choice["prompt_token_ids"], f"{where} prompt_token_ids", sent)
            if choice.get("prompt_logprobs") is not None:
                state["prompt_logprobs"] = _prompt_logprobs(choice["prompt_logprobs"], f"{where} prompt_logprobs", sent)
            entries = logprob_entries(choice.get("logprobs"), chat, f"{where} logprobs", sent)
            if entries is not None:
                state["logprobs"] = (state["logprobs"] or ()) + entries
            state["chunks"].append(_chunk(choice, chat, where, sent))
            if choice.get("finish_reason") is not None:
                state["finish"] = (choice["finish_reason"], choice.get("stop_reason"))
    if not per_choice:
        per_choice[0] = {"chunks": [], "finish": (None, None), "prompt_ids": None, "logprobs": None,
                         "prompt_logprobs": None}
    if sorted(per_choice) != list(range(len(per_choice))):
        raise ServerError(f"the stream's choice indexes are {sorted(per_choice)}, not 0 to {len(per_choice) - 1}", sent)
    generations = [_assembled(per_choice[index], prompt_ids, sent) for index in sorted(per_choice)]
    return _with_choices(generations, usage, stream.missing_end)


class _Ending:
    """A stream's events, iterated once; then ``missing_end`` is what the stream's generator returned."""

    def __init__(self, events):
        self.events, self.missing_end = events, None

    def __iter__(self):
        self.missing_end = yield from self.events


def _assembled(state: dict, prompt_ids, sent: dict) -> Generation:
    """One choice's streamed chunks as a Generation."""
    chunks = state["chunks"]
    with_ids = [chunk.ids for chunk in chunks if chunk.ids is not None]
    deltas = [{"tool_calls": list(chunk.tool_call_deltas)} for chunk in chunks if chunk.tool_call_deltas]
    try:
        calls = tuple(assemble(deltas).get("tool_calls", ()))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ServerError(f"tool-call deltas are malformed: {type(exc).__name__}: {exc}", sent) from None
    finish_reason, stop_reason = state["finish"]
    return Generation(text="".join(chunk.text for chunk in chunks),
                      ids=tuple(i for ids in with_ids for i in ids) if with_ids else None,
                      finish_reason=finish_reason, stop_reason=stop_reason,
                      reasoning="".join(chunk.reasoning for chunk in chunks), tool_calls=calls,
                      chunks=tuple(chunks), prompt_ids=state["prompt_ids"] or prompt_ids, request=sent,
                      logprobs=state["logprobs"], prompt_logprobs=state["prompt_logprobs"])


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
