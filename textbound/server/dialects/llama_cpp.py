"""llama.cpp's dialect: ``llama-server``'s own endpoints, and its OpenAI-compatible chat completions.

Field names as in llama.cpp's tools/server/README.md and server-context.cpp (the llama-cpp-python
0.3.36 sdist's vendor/llama.cpp):
- ``tokenize``: ``POST /tokenize`` with ``content``, ``add_special`` and ``parse_special: true``
  (added tokens in the text are matched, as tokenizers does); the answer's ``tokens``.
- ``detokenize``: ``POST /detokenize`` with ``tokens``; the answer's ``content`` (the pieces of the
  ids concatenated, special ones rendered).
- ``chat_text``: ``POST /apply-template`` with ``messages`` (and ``tools``, ``add_generation_prompt``):
  the answer's ``prompt``, the text the server's own Jinja engine renders.
- ``chat_ids``: the server's chat prompt ids are ``POST /tokenize`` of that text with ``add_special:
  true``, as /v1/chat/completions tokenizes its rendered prompt (server-context.cpp calls
  tokenize_input_prompts(..., add_special=true, parse_special=true)); no endpoint returns them directly.
- ``chat_template``: ``GET /props``'s ``chat_template``.
- ``generate`` of a prompt (text or ids): ``POST /completion`` with ``n_predict``, ``seed``,
  ``temperature``, ``stop``, ``stream`` and ``return_tokens: true``; the answer's ``content`` and
  ``tokens`` (streamed: one event per sampled token, ``stop: true`` on the last, no ``[DONE]``);
  ``finish_reason`` is ``"stop"`` for ``stop_type`` eos or word and ``"length"`` for limit,
  ``stop_reason`` the ``stopping_word`` when a stop string ended it (None otherwise, as vLLM's
  for an end-of-sequence token).
- ``generate`` of a chat: ``POST /v1/chat/completions`` as the OpenAI dialect sends it, plus
  ``return_tokens`` and ``verbose``, so each answer carries llama.cpp's own result in ``__verbose``;
  its ``tokens`` become the choice's ``token_ids`` and its ``stopping_word`` the ``stop_reason``.
``logit_bias`` steers (``[[id, 100], ...]``), ``n_probs`` asks logprobs (``completion_probabilities``:
``id``, ``token`` and the token's own ``bytes``); ``GET /props``'s ``total_slots`` are its slots.
Every generation samples from the whole distribution at the given temperature (``top_k: 0``,
``top_p: 1``, ``min_p: 0``, no repetition penalty) and with ``cache_prompt: false``, since the
server says reused prompt caches may change the logits, and streamed must equal non-streamed.
NotProvided: ``include_stop_str_in_output``, ``skip_special_tokens=False`` (a server-wide
``--special`` flag, not a request field) and ``continue_final_message`` for chat text.

    >>> dialect = LlamaCppDialect("http://127.0.0.1:8080")                        # doctest: +SKIP
    >>> dialect.tokenize("Hi there"), dialect.detokenize([13048, 1052])           # doctest: +SKIP
    ([13048, 1052], 'Hi there')
    >>> dialect.generate(GenerationRequest(prompt=[13048], max_tokens=2)).finish_reason  # doctest: +SKIP
    'length'
"""
from __future__ import annotations

from collections.abc import Iterator

from ..client import DONE, ServerClient
from ..protocol import STEERING_BIAS, Chunk, Generation, GenerationRequest, Logprob, NotProvided, ServerError
from .openai import OpenAIDialect, ids_field

COMPLETION_PATH = "/completion"
# Plain sampling at the request's temperature: llama.cpp's default chain truncates (top-k 40, ...).
SAMPLING = {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0, "cache_prompt": False}
FINISH_REASONS = {"eos": "stop", "word": "stop", "limit": "length"}
VERBOSE = "__verbose"


class LlamaCppDialect(OpenAIDialect):
    """A llama.cpp ``llama-server`` at ``url``."""

    name = "llama.cpp"

    def __init__(self, url: str, *, model: str | None = None, timeout: float = 30.0):
        super().__init__(url, model=model, timeout=timeout)
        self.server = self.client
        self.client = _ChatAnswers(self.server)  # what the OpenAI dialect's chat requests go through

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        body = {"content": text, "add_special": add_special_tokens, "parse_special": True}
        return ids_field(self.server.post_json("/tokenize", body).get("tokens"), "the answer's tokens",
                         _sent("/tokenize", body))

    def detokenize(self, ids: list[int]) -> str:
        body = {"tokens": list(ids)}
        return _text(self.server.post_json("/detokenize", body), "content", _sent("/detokenize", body))

    def chat_text(self, messages: list[dict], *, tools: list[dict] | None = None,
                  add_generation_prompt: bool = True, chat_template_kwargs: dict | None = None) -> str:
        return self._rendered(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                              chat_template_kwargs=chat_template_kwargs)

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        text = self._rendered(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                              continue_final_message=continue_final_message,
                              chat_template_kwargs=chat_template_kwargs)
        return self.tokenize(text, add_special_tokens=True)

    def chat_template(self) -> str:
        sent = {"method": "GET", "path": "/props", "body": None}
        return _text(self.server.get_json("/props"), "chat_template", sent)

    def generate(self, request: GenerationRequest) -> Generation:
        if request.prompt is None:
            return super().generate(request)
        if request.messages is not None:
            raise ValueError("a GenerationRequest needs exactly one of prompt and messages")
        self.extension_fields(request, chat=False)  # NotProvided for what llama.cpp cannot do
        body = {"prompt": request.prompt, "n_predict": request.max_tokens, "seed": request.seed,
                "temperature": request.temperature, "stop": list(request.stop), "stream": request.stream,
                "return_tokens": True, **SAMPLING, **_completion_shape(request)}
        sent = _sent(COMPLETION_PATH, body)
        if request.stream:
            return _streamed_completion(self.server.stream(COMPLETION_PATH, body, done=None), sent)
        answer = self.server.post_json(COMPLETION_PATH, body)
        return Generation(text=_text(answer, "content", sent), ids=tuple(ids_field(answer.get("tokens"), "tokens", sent)),
                          **_ending(answer, sent), request=sent,
                          logprobs=_probabilities(answer, sent, "the answer") if request.logprobs is not None else None)

    def slots(self) -> int | None:
        """The server's parallel slots (``GET /props``'s ``total_slots``: its ``-np``)."""
        slots = self.server.get_json("/props").get("total_slots")
        return slots if isinstance(slots, int) and slots > 0 else None

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        lacking = [name for name, asked in (("include_stop_str_in_output", request.include_stop_str_in_output),
                                            ("skip_special_tokens=False (a server flag)",
                                             not request.skip_special_tokens)) if asked]
        if lacking:
            raise NotProvided(f"{self.name}: no {', '.join(lacking)}")
        fields = {"return_tokens": True, "verbose": True, **SAMPLING}
        if request.chat_template_kwargs is not None:
            fields["chat_template_kwargs"] = request.chat_template_kwargs
        return fields

    def _rendered(self, messages: list[dict], **options) -> str:
        body = {"messages": messages, **{key: value for key, value in options.items() if value is not None}}
        if not body.get("continue_final_message"):
            body.pop("continue_final_message", None)
        return _text(self.server.post_json("/apply-template", body), "prompt", _sent("/apply-template", body))


class _ChatAnswers:
    """The server's client as the OpenAI dialect's chat requests see it: llama.cpp's own result in an
    answer's ``__verbose`` moved where the OpenAI readers look (``token_ids``, ``stop_reason``)."""

    def __init__(self, client: ServerClient):
        self.client = client

    def post_json(self, path: str, body: dict) -> dict:
        return _with_verbose_fields(self.client.post_json(path, body), _sent(path, body))

    def stream(self, path: str, body: dict, done: str | None = DONE, done_required: bool = True) -> Iterator[dict]:
        for event in self.client.stream(path, body, done, done_required=done_required):
            yield _with_verbose_fields(event, _sent(path, body))


def _with_verbose_fields(answer: dict, sent: dict) -> dict:
    verbose, choices = answer.get(VERBOSE), answer.get("choices")
    if not isinstance(verbose, dict) or not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return answer
    choice = dict(choices[0])
    if verbose.get("tokens"):  # a final streamed event repeats none: its tokens came with the chunks
        choice["token_ids"] = ids_field(verbose["tokens"], f"{VERBOSE}.tokens", sent)
    if verbose.get("stop_type") == "word":
        choice["stop_reason"] = verbose.get("stopping_word")
    return {**answer, "choices": [choice, *choices[1:]]}


def _completion_shape(request: GenerationRequest) -> dict:
    """/completion's fields for the request's shape: ``logit_bias`` as ``[[id, bias], ...]`` and
    ``n_probs``; several choices, echo and prompt logprobs it has not (NotProvided)."""
    lacking = [name for name, asked in (("n > 1", request.n != 1), ("echo", request.echo),
                                        ("prompt_logprobs", request.prompt_logprobs is not None),
                                        ("allowed_token_ids", request.steer_by == "allowed_token_ids")) if asked]
    if lacking:
        raise NotProvided(f"llama.cpp /completion: no {', '.join(lacking)}")
    fields: dict = {}
    if request.steer and request.steer_by:
        fields["logit_bias"] = [[i, STEERING_BIAS] for i in request.steer]
    if request.logprobs is not None:
        fields["n_probs"] = max(1, request.logprobs)
    return fields


def _probabilities(answer: dict, sent: dict, where: str) -> tuple[Logprob, ...]:
    """``completion_probabilities`` as entries: each ``{id, token, bytes}`` (llama.cpp: ``bytes`` the
    token's own piece, ``token`` its longest valid UTF-8 beginning; server-task.cpp probs_vector_to_json)."""
    entries = []
    for n, entry in enumerate(answer.get("completion_probabilities") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            raise ServerError(f"{where}'s completion_probabilities[{n}] is not an entry with a token", sent)
        data, token_id = entry.get("bytes"), entry.get("id")
        if not (isinstance(data, list) and all(isinstance(b, int) and 0 <= b < 256 for b in data)):
            raise ServerError(f"{where}'s completion_probabilities[{n}].bytes is not a list of bytes", sent)
        entries.append(Logprob(entry["token"], tuple(data), token_id if isinstance(token_id, int) else None))
    return tuple(entries)


def _streamed_completion(events: Iterator[dict], sent: dict) -> Generation:
    chunks: list[Chunk] = []
    logprobs: list[Logprob] = []
    for number, event in enumerate(events, start=1):
        where = f"SSE event {number}"
        if "error" in event:
            raise ServerError(f"error in {where}: {str(event['error'])[:200]}", sent)
        chunks.append(Chunk(text=_text(event, "content", sent, where),
                            ids=tuple(ids_field(event.get("tokens", []), f"{where} tokens", sent))))
        logprobs += _probabilities(event, sent, where)
        if event.get("stop") is True:
            return Generation(text="".join(chunk.text for chunk in chunks),
                              ids=tuple(i for chunk in chunks for i in chunk.ids), **_ending(event, sent),
                              chunks=tuple(chunks), request=sent,
                              logprobs=tuple(logprobs) if "n_probs" in sent["body"] else None)
    raise ServerError(f"the stream ended after {len(chunks)} events without one with stop: true", sent)


def _ending(answer: dict, sent: dict) -> dict:
    """``finish_reason``, ``stop_reason`` and ``usage`` (its ``tokens_evaluated`` and ``tokens_predicted``)
    of a final /completion answer."""
    stop_type = answer.get("stop_type")
    if stop_type not in FINISH_REASONS:
        raise ServerError(f"stop_type is {stop_type!r}, not one of {', '.join(FINISH_REASONS)}", sent)
    counts = (answer.get("tokens_evaluated"), answer.get("tokens_predicted"))
    usage = ({"prompt_tokens": counts[0], "completion_tokens": counts[1]}
             if all(isinstance(count, int) for count in counts) else None)
    return {"finish_reason": FINISH_REASONS[stop_type],
            "stop_reason": _text(answer, "stopping_word", sent) if stop_type == "word" else None, "usage": usage}


def _text(answer: dict, key: str, sent: dict, where: str = "the answer") -> str:
    value = answer.get(key)
    if not isinstance(value, str):
        raise ServerError(f"{where}'s {key} is {type(value).__name__}, not a string", sent)
    return value


def _sent(path: str, body: dict) -> dict:
    return {"method": "POST", "path": path, "body": body}
