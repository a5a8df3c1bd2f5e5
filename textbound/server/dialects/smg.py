"""SGLang's model gateway (smg)'s dialect: its router in gRPC mode, which tokenizes, renders chat
templates, detokenizes, applies stop strings and parses tool calls and reasoning itself (Rust:
crates/tokenizer, tool_parser, reasoning_parser), in front of workers that see token ids only.

Routes as smg 1.13.0 serves them (model_gateway/src/server.rs):
- ``tokenize``: ``POST /v1/tokenize`` ``{model, prompt}`` -> ``{tokens}``, never adding the special
  tokens (endpoints/tokenize/handlers.rs encodes with ``add_special_tokens=false``);
- ``detokenize``: ``POST /v1/detokenize`` ``{model, tokens, skip_special_tokens: false}`` -> ``{text}``;
- ``generate`` of a prompt (text or ids): SGLang's native ``POST /generate`` (``text`` or
  ``input_ids``, ``sampling_params``: ``max_new_tokens``, ``temperature``, ``stop``,
  ``skip_special_tokens``, ``no_stop_trim`` for ``include_stop_str_in_output``), answering ``text``,
  ``output_ids`` and ``meta_info`` (``finish_reason``, ``matched_stop``, the token counts read as the
  usage); streamed, each event's ``text`` is the whole text so far and its ``output_ids`` the new
  ids; not streamed, the answer is a list of one. Its OpenAI ``/v1/completions`` takes no ids and
  answers none;
- ``generate`` of a chat: ``POST /v1/chat/completions`` as the OpenAI dialect sends it, with
  ``skip_special_tokens``, ``no_stop_trim`` and ``chat_template_kwargs``; no ids answered;
- ``chat_ids``: no route of smg's answers what its router rendered and tokenized, but its worker is
  sent exactly that: a chat completion whose ``rid`` (the request id the router sends its worker)
  starts with PROMPT_IDS_RID is answered, by the worker engines/smg/serve.py runs, with the prompt
  ids it was sent, as decimal numbers (the message's content, or its reasoning where the reasoning
  parser takes it). The router always renders with the generation prompt, or continues the final
  assistant message (``continue_final_message``); a chat without either is NotProvided. Before any
  other worker the answer is not ids (ServerError);
- ``chat_text``, ``chat_template``: no route (NotProvided);
- steering: none. The router sends a worker no logit bias (its gRPC SamplingParams' ``logit_bias``
  is left empty) and has no allowed ids.

    >>> dialect = SmgDialect("http://127.0.0.1:8000", model="m")                  # doctest: +SKIP
    >>> dialect.tokenize("Hi there")                                             # doctest: +SKIP
    [13048, 1052]
"""
from __future__ import annotations

import uuid

from ..protocol import Chunk, Generation, GenerationRequest, NotProvided, ServerError
from .openai import CHAT_PATH, OpenAIDialect, ids_field

TOKENIZE_PATH, DETOKENIZE_PATH, GENERATE_PATH = "/v1/tokenize", "/v1/detokenize", "/generate"
PROMPT_IDS_RID = "textbound-prompt-ids-"  # engines/smg/serve.py's: its worker answers these with their prompt ids


class SmgDialect(OpenAIDialect):
    """smg's router at ``url``."""

    name = "smg"
    offers_completions = True
    steering = ()

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if add_special_tokens:
            raise NotProvided(f"{self.name}: /v1/tokenize never adds the special tokens")
        body = {**self.model_field(), "prompt": text}
        return ids_field(self.client.post_json(TOKENIZE_PATH, body).get("tokens"), "the answer's tokens",
                         {"method": "POST", "path": TOKENIZE_PATH, "body": body})

    def detokenize(self, ids: list[int]) -> str:
        body = {**self.model_field(), "tokens": list(ids), "skip_special_tokens": False}
        text = self.client.post_json(DETOKENIZE_PATH, body).get("text")
        if not isinstance(text, str):
            raise ServerError("the answer's text is not a string", {"method": "POST", "path": DETOKENIZE_PATH,
                                                                    "body": body})
        return text

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        if not (add_generation_prompt or continue_final_message):
            raise NotProvided(f"{self.name}: a chat is rendered with the generation prompt "
                              "or continues its final message")
        body = {**self.model_field(), "messages": messages, "continue_final_message": continue_final_message,
                "rid": f"{PROMPT_IDS_RID}{uuid.uuid4().hex}"}
        if tools is not None:
            body["tools"] = tools
        if chat_template_kwargs is not None:
            body["chat_template_kwargs"] = chat_template_kwargs
        sent = {"method": "POST", "path": CHAT_PATH, "body": body}
        choices = self.client.post_json(CHAT_PATH, body).get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise ServerError("the answer has no message", sent)
        written = f"{message.get('reasoning_content') or ''} {message.get('content') or ''}".split()
        if not written or not all(number.isascii() and number.isdigit() for number in written):
            raise ServerError("the worker's answer is not the prompt ids (a worker of engines/smg/serve.py's?)", sent)
        return [int(number) for number in written]

    def generate(self, request: GenerationRequest) -> Generation:
        if request.messages is not None:
            return super().generate(request)
        body = self.native_body(request)
        sent = {"method": "POST", "path": GENERATE_PATH, "body": body}
        if request.stream:
            return _native_streamed(self.client.stream(GENERATE_PATH, body), sent)
        answer = self.client.post_value(GENERATE_PATH, body)
        if not isinstance(answer, list) or len(answer) != 1 or not isinstance(answer[0], dict):
            raise ServerError("the answer is not a list of one generation", sent)
        text = answer[0].get("text")
        if not isinstance(text, str):
            raise ServerError("the answer's text is not a string", sent)
        finish, stop = _finish(answer[0].get("meta_info"), sent)
        return Generation(text=text, ids=tuple(ids_field(answer[0].get("output_ids"), "output_ids", sent)),
                          finish_reason=finish, stop_reason=stop, request=sent, usage=_usage(answer[0]["meta_info"]))

    def native_body(self, request: GenerationRequest) -> dict:
        """The ``/generate`` body asking for ``request`` (a prompt's generation).

        >>> SmgDialect("http://h:1", model="m").native_body(GenerationRequest(prompt=[5, 7], max_tokens=2, stop=("x",)))
        {'model': 'm', 'input_ids': [5, 7], 'stream': False, 'sampling_params': {'max_new_tokens': 2, \
'temperature': 1.0, 'skip_special_tokens': True, 'no_stop_trim': False, 'stop': ['x']}}
        """
        lacking = [name for name, asked in (("steering", bool(request.steer)), ("n", request.n != 1),
                                            ("logprobs", request.logprobs is not None), ("echo", request.echo),
                                            ("prompt logprobs", request.prompt_logprobs is not None),
                                            ("tools", request.tools is not None),
                                            ("response_format", request.response_format is not None))
                   if asked]
        if lacking:
            raise NotProvided(f"{self.name}: /generate is not asked for {', '.join(lacking)} here")
        if request.chat_template_kwargs is not None:
            raise ValueError("chat_template_kwargs are for a chat (messages), not a prompt")
        sampling = {"max_new_tokens": request.max_tokens, "temperature": request.temperature,
                    "skip_special_tokens": request.skip_special_tokens,
                    "no_stop_trim": request.include_stop_str_in_output}
        if request.stop:
            sampling["stop"] = list(request.stop)
        prompt = {"text": request.prompt} if isinstance(request.prompt, str) else {"input_ids": list(request.prompt)}
        return {**self.model_field(), **prompt, "stream": request.stream, "sampling_params": sampling}

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        fields = {"skip_special_tokens": request.skip_special_tokens,
                  "no_stop_trim": request.include_stop_str_in_output}
        if request.chat_template_kwargs is not None:
            fields["chat_template_kwargs"] = request.chat_template_kwargs
        return fields


def _finish(meta, sent: dict) -> tuple[str | None, str | int | None]:
    """``meta_info``'s finish reason (``"length"`` or ``{"type": "length", ...}``) and matched stop."""
    if not isinstance(meta, dict):
        raise ServerError("meta_info is not an object", sent)
    finish = meta.get("finish_reason")
    if isinstance(finish, dict):
        finish = finish.get("type")
    if finish is not None and not isinstance(finish, str):
        raise ServerError(f"meta_info.finish_reason is {finish!r}", sent)
    return finish, meta.get("matched_stop")


def _usage(meta: dict) -> dict:
    """The OpenAI usage of a generation's ``meta_info`` (its token counts)."""
    return {name: meta.get(name) for name in ("prompt_tokens", "completion_tokens")}


def _native_streamed(events, sent: dict) -> Generation:
    """A streamed ``/generate``: each event's text is the whole text so far, its ids the new ones."""
    chunks, text, finish, stop, usage = [], "", None, None, None
    for number, event in enumerate(events, start=1):
        where = f"SSE event {number}"
        if "error" in event:
            raise ServerError(f"error in {where}: {str(event['error'])[:200]}", sent)
        so_far = event.get("text")
        if not isinstance(so_far, str) or not so_far.startswith(text):
            raise ServerError(f"{where}'s text does not extend the text streamed before it", sent)
        ids = tuple(ids_field(event.get("output_ids"), f"{where} output_ids", sent))
        chunks.append(Chunk(text=so_far[len(text):], ids=ids))
        text = so_far
        event_finish, event_stop = _finish(event.get("meta_info"), sent)
        if event_finish is not None:
            finish, stop, usage = event_finish, event_stop, _usage(event["meta_info"])
    return Generation(text=text, ids=tuple(i for chunk in chunks for i in chunk.ids), finish_reason=finish,
                      stop_reason=stop, chunks=tuple(chunks), request=sent, usage=usage)
