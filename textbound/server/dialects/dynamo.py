"""NVIDIA Dynamo's dialect: its OpenAI front end (Rust: ``dynamo_llm::http::service``), which renders
the chat template, tokenizes, detokenizes, applies stop strings and parses tool calls and reasoning
itself, in front of workers that see token ids only.

Fields as ai-dynamo-runtime 1.6.1 takes and answers them (``nvext``: Dynamo's request extension):
- ``generate``: ``POST /v1/completions`` (a prompt as text or ids) and ``/v1/chat/completions``, as
  the OpenAI dialect sends them, with ``include_stop_str_in_output``, ``skip_special_tokens``,
  ``chat_template_kwargs`` (a chat's) and ``nvext: {"extra_fields": ["completion_token_ids"]}``: every
  answer and chunk carries the generated ids in ``nvext.completion_token_ids`` (read as the choice's
  ``token_ids``). ``return_token_ids`` is refused (400), ``stop_reason`` not answered;
- ``chat_ids`` and ``chat_text``: a streamed chat of one token with ``nvext: {"annotations":
  ["token_ids", "formatted_prompt"]}``, whose first events, before any data, are ``event: token_ids``
  and ``event: formatted_prompt`` with the prompt's ids and text (JSON) in a comment line: what the
  preprocessor rendered and tokenized, ``add_generation_prompt``, ``continue_final_message`` and
  ``chat_template_kwargs`` sent as asked;
- ``tokenize`` (with the special tokens added: the only way Dynamo tokenizes a text prompt): a
  streamed completion of the text for one token with the ``token_ids`` annotation;
- ``detokenize`` and ``chat_template``: no route (NotProvided).

    >>> dialect = DynamoDialect("http://127.0.0.1:8000", model="m")               # doctest: +SKIP
    >>> dialect.chat_ids([{"role": "user", "content": "Hi there"}])               # doctest: +SKIP
    [151644, 872, 198, 13048, 1052, 151645, 198, 151644, 77091, 198]
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from ..client import DONE, ServerClient
from ..protocol import GenerationRequest, NotProvided, ServerError
from .openai import CHAT_PATH, COMPLETIONS_PATH, OpenAIDialect, ids_field

NVEXT = "nvext"
TOKEN_IDS_FIELD = "completion_token_ids"
PROMPT_IDS, PROMPT_TEXT = "token_ids", "formatted_prompt"  # the annotations naming the rendered prompt


class DynamoDialect(OpenAIDialect):
    """Dynamo's OpenAI front end at ``url``."""

    name = "dynamo"
    offers_completions = True

    def __init__(self, url: str, *, model: str | None = None, timeout: float = 30.0):
        super().__init__(url, model=model, timeout=timeout)
        self.server = self.client
        self.client = _NvextAnswers(self.server)  # what the OpenAI dialect's requests go through

    def chat_ids(self, messages: list[dict], *, tools: list[dict] | None = None,
                 add_generation_prompt: bool = True, continue_final_message: bool = False,
                 chat_template_kwargs: dict | None = None) -> list[int]:
        return self._prompt_ids(CHAT_PATH, self._chat_body(messages, tools, add_generation_prompt,
                                                           continue_final_message, chat_template_kwargs))

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if not add_special_tokens:
            raise NotProvided(f"{self.name}: a completion's text prompt is tokenized with the special tokens added; "
                              "no route tokenizes without")
        return self._prompt_ids(COMPLETIONS_PATH, {**self.model_field(), "prompt": text})

    def _prompt_ids(self, path: str, body: dict) -> list[int]:
        body, found = self._annotated(PROMPT_IDS, path, body)
        try:
            ids = json.loads(found)
        except (json.JSONDecodeError, TypeError):
            ids = None
        return ids_field(ids, f"the {PROMPT_IDS} annotation", {"method": "POST", "path": path, "body": body})

    def chat_text(self, messages: list[dict], *, tools: list[dict] | None = None,
                  add_generation_prompt: bool = True, chat_template_kwargs: dict | None = None) -> str:
        body, found = self._annotated(PROMPT_TEXT, CHAT_PATH, self._chat_body(messages, tools, add_generation_prompt,
                                                                              False, chat_template_kwargs))
        if not isinstance(found, str):
            raise ServerError(f"the {PROMPT_TEXT} annotation is not a string", {"method": "POST", "path": CHAT_PATH,
                                                                                "body": body})
        return found

    def _chat_body(self, messages, tools, add_generation_prompt, continue_final_message, chat_template_kwargs) -> dict:
        body = {**self.model_field(), "messages": messages, "add_generation_prompt": add_generation_prompt,
                "continue_final_message": continue_final_message}
        if tools is not None:
            body["tools"] = tools
        if chat_template_kwargs is not None:
            body["chat_template_kwargs"] = chat_template_kwargs
        return body

    def _annotated(self, annotation: str, path: str, request: dict) -> tuple[dict, object]:
        """The request (``request`` streamed for one token with ``annotation`` asked) and the
        annotation's JSON value."""
        body = {**request, "max_tokens": 1, "stream": True, NVEXT: {"annotations": [annotation]}}
        sent = {"method": "POST", "path": path, "body": body}
        for event in self.server.stream(path, body, named=True):
            if event.get("event") == annotation:
                try:
                    return body, json.loads(event["comment"])
                except json.JSONDecodeError:
                    raise ServerError(f"the {annotation} annotation is not JSON", sent) from None
        raise ServerError(f"no {annotation} annotation in the stream", sent)

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        fields = {"include_stop_str_in_output": request.include_stop_str_in_output,
                  "skip_special_tokens": request.skip_special_tokens, NVEXT: {"extra_fields": [TOKEN_IDS_FIELD]}}
        if request.chat_template_kwargs is not None:
            if not chat:
                raise ValueError("chat_template_kwargs are for a chat (messages), not a prompt")
            fields["chat_template_kwargs"] = request.chat_template_kwargs
        return fields


class _NvextAnswers:
    """The server's client as the OpenAI dialect's readers see it: ``nvext.completion_token_ids`` of
    an answer or chunk moved to its first choice's ``token_ids``."""

    def __init__(self, client: ServerClient):
        self.client = client

    def post_json(self, path: str, body: dict) -> dict:
        return _with_token_ids(self.client.post_json(path, body))

    def stream(self, path: str, body: dict, done: str | None = DONE, done_required: bool = True) -> Iterator[dict]:
        for event in self.client.stream(path, body, done, done_required=done_required):
            yield _with_token_ids(event)


def _with_token_ids(answer: dict) -> dict:
    """``{"choices": [{...}], "nvext": {"completion_token_ids": [5]}}`` -> the choice with ``"token_ids": [5]``."""
    extension, choices = answer.get(NVEXT), answer.get("choices")
    if not isinstance(extension, dict) or TOKEN_IDS_FIELD not in extension or not isinstance(choices, list) \
            or not choices or not isinstance(choices[0], dict):
        return answer
    return {**answer, "choices": [{**choices[0], "token_ids": extension[TOKEN_IDS_FIELD]}, *choices[1:]]}
