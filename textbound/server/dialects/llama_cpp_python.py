"""llama-cpp-python's dialect: the FastAPI server ``python -m llama_cpp.server`` runs, a code base of
its own in front of llama.cpp's library (not llama.cpp's ``llama-server``).

Routes and fields as in llama-cpp-python 0.3.36's ``llama_cpp/server/app.py`` and ``types.py``:
- ``tokenize``: ``POST /extras/tokenize`` with ``input``; the answer's ``tokens``. The route calls
  ``Llama.tokenize(input.encode("utf-8"), special=True)`` with ``add_bos`` left True, so it always
  adds the vocabulary's special tokens: ``add_special_tokens=False`` is NotProvided;
- ``detokenize``: ``POST /extras/detokenize`` with ``tokens``; the answer's ``text`` (the route
  decodes ``Llama.detokenize``'s bytes with a strict ``.decode("utf-8")``);
- ``generate`` of a chat: ``POST /v1/chat/completions`` as the OpenAI dialect sends it, with plain
  sampling at the request's temperature (``top_k: 0``, ``top_p: 1``, ``min_p: 0``, ``repeat_penalty:
  1``; the server's defaults truncate: 40, 0.95, 0.05, 1.1). No answer carries token ids. Its
  ``/v1/completions`` takes text prompts only (``prompt: str | list[str]``) and the checks' prompts
  are ids, so prompts are NotProvided: the output checks ask the chat instead.
Chat text and chat ids have no route; the chat formatter itself is checked in-process
(textbound.adapters.llama_cpp_python_chat). NotProvided too: ``include_stop_str_in_output``,
``skip_special_tokens=False`` and ``chat_template_kwargs`` (a load-time setting of the server, not a
request field).

    >>> dialect = LlamaCppPythonDialect("http://127.0.0.1:8000")                 # doctest: +SKIP
    >>> dialect.tokenize("Hi there", add_special_tokens=True)                    # doctest: +SKIP
    [128000, 13347, 1070]
"""
from __future__ import annotations

from ..protocol import GenerationRequest, NotProvided, ServerError
from .openai import OpenAIDialect, ids_field

TOKENIZE_PATH = "/extras/tokenize"
DETOKENIZE_PATH = "/extras/detokenize"
# Plain sampling at the request's temperature: the server's defaults truncate the distribution.
SAMPLING = {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}


class LlamaCppPythonDialect(OpenAIDialect):
    """llama-cpp-python's ``llama_cpp.server`` at ``url``."""

    name = "llama-cpp-python"

    def tokenize(self, text: str, add_special_tokens: bool = False) -> list[int]:
        if not add_special_tokens:
            raise NotProvided(f"{self.name}: {TOKENIZE_PATH} always adds the vocabulary's special tokens")
        body = {**self.model_field(), "input": text}
        return ids_field(self.client.post_json(TOKENIZE_PATH, body).get("tokens"), "the answer's tokens",
                         {"method": "POST", "path": TOKENIZE_PATH, "body": body})

    def detokenize(self, ids: list[int]) -> str:
        body = {**self.model_field(), "tokens": list(ids)}
        text = self.client.post_json(DETOKENIZE_PATH, body).get("text")
        if not isinstance(text, str):
            raise ServerError("the answer's text is not a string", {"method": "POST", "path": DETOKENIZE_PATH,
                                                                    "body": body})
        return text

    def extension_fields(self, request: GenerationRequest, chat: bool) -> dict:
        return {**super().extension_fields(request, chat), **SAMPLING}
