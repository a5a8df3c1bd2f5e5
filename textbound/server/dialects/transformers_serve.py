"""transformers serve's dialect: the OpenAI chat completions of ``transformers serve``
(transformers/cli/serving/), read past its streams' missing ``data: [DONE]``.

transformers 5.25's server ends every stream after its last chunk without OpenAI's ``data: [DONE]``
(chat_completion.py's ``_streaming``; reports/field/upstream/transformers/serve-stream-without-done.md).
The openai dialect's client takes such a stream for a cut one, so nothing behind it can be checked;
this dialect reads a stream to the body's end instead, and the generation it returns names the end
event it lacked (``Generation.missing_end``), which detokenizer/server_whole reports, once per
case, as its own divergence. Everything else is the openai dialect's: chat completions only, no
token ids, no tokenize, detokenize or chat rendering route.

    >>> dialect = TransformersServeDialect("http://127.0.0.1:8000")               # doctest: +SKIP
    >>> dialect.generate(GenerationRequest(messages=[{"role": "user", "content": "Hi"}], stream=True)).missing_end  # doctest: +SKIP
    '[DONE]'
"""
from __future__ import annotations

from .openai import OpenAIDialect


class TransformersServeDialect(OpenAIDialect):
    """``transformers serve`` at ``url``."""

    name = "transformers-serve"
    done_required = False
