"""vLLM's dialect: the OpenAI API plus vLLM 0.33's extensions, as its ``vllm serve`` speaks it.

- ``POST /tokenize`` with ``prompt`` and ``add_special_tokens`` (tokenize), and with ``messages``,
  ``tools``, ``add_generation_prompt``, ``continue_final_message`` and ``chat_template_kwargs``
  (chat ids); the answer's ``tokens``;
- ``POST /detokenize`` with ``tokens``; the answer's ``prompt``;
- ``POST /v1/completions`` and ``/v1/chat/completions``, streamed and not, with
  ``return_token_ids: true``: every choice and chunk carries ``token_ids``, and ``prompt_token_ids``
  come on the completion choice, the chat answer or the first chunk; ``stop_reason`` is the stop
  string or id that ended generation; ``include_stop_str_in_output``, ``skip_special_tokens`` and
  ``chat_template_kwargs`` are sent as asked; ``allowed_token_ids`` steers (as OpenAI's ``logit_bias``
  does), ``echo`` and ``prompt_logprobs`` (a list per prompt token: None, then ``{"<id>":
  {"logprob", "rank", "decoded_token"}}``) are the completions' own.
Field names as in vllm/entrypoints/serve/tokenize/protocol.py and
vllm/entrypoints/openai/{completion,chat_completion}/protocol.py. SGLang's server answers the same
requests where it offers them. vLLM renders no chat text on its own: ``chat_text`` is NotProvided.

    >>> dialect = VllmDialect("http://127.0.0.1:8000", model="m")                # doctest: +SKIP
    >>> dialect.tokenize("Hi there"), dialect.detokenize([13048, 1052])          # doctest: +SKIP
    ([13048, 1052], 'Hi there')
"""
from __future__ import annotations

from ..protocol import GenerationRequest, ServerError
from .openai import OpenAIDialect, ids_field


class VllmDialect(OpenAIDialect):
    """A vLLM (or SGLang) OpenAI-compatible server at ``url``."""

    name = "vllm"
    offers_completions = True
    vllm_extensions = True
    steering = ("allowed_token_ids", "logit_bias")

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self._tokens({"prompt": text, "add_special_tokens": add_special_tokens})

    def detokenize(self, ids: list[int]) -> str:
        body = {**self.model_field(), "tokens": list(ids)}
        text = self.client.post_json("/detokenize", body).get("prompt")
        if not isinstance(text, str):
            raise ServerError("the answer's prompt is not a string", {"method": "POST", "path": "/detokenize",
                                                                      "body": body})
        return text

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        body = {"messages": messages, "add_generation_prompt": add_generation_prompt,
                "continue_final_message": continue_final_message}
        if tools is not None:
            body["tools"] = tools
        if chat_template_kwargs is not None:
            body["chat_template_kwargs"] = chat_template_kwargs
        return self._tokens(body)

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        fields = {"return_token_ids": True, "include_stop_str_in_output": request.include_stop_str_in_output,
                  "skip_special_tokens": request.skip_special_tokens}
        if request.chat_template_kwargs is not None:
            if not chat:
                raise ValueError("chat_template_kwargs are for a chat (messages), not a prompt")
            fields["chat_template_kwargs"] = request.chat_template_kwargs
        return fields

    def _tokens(self, fields: dict) -> list[int]:
        body = {**self.model_field(), **fields}
        return ids_field(self.client.post_json("/tokenize", body).get("tokens"), "the answer's tokens",
                         {"method": "POST", "path": "/tokenize", "body": body})
