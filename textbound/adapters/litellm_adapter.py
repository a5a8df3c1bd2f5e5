"""litellm's own rendering of Hugging Face chat templates, as an ``--impl`` of the ``chat`` component.

    textbound check --impl textbound.adapters.litellm_adapter --component chat

Server entry point: ``litellm.litellm_core_utils.prompt_templates.factory.prompt_factory(model,
messages)``, as litellm's text-completion handlers call it; no pre- or post-steps (below).

litellm sends a chat request to a text-completion backend (sagemaker, replicate, triton,
predibase, petals, vLLM's completion handler) as one prompt string:
``litellm.llms.sagemaker.completion.transformation`` and the others call
``litellm.litellm_core_utils.prompt_templates.factory.prompt_factory(model=..., messages=...)``,
which, for a model without a built-in template of its own, calls ``hf_chat_template(model,
messages)``: the model's ``tokenizer_config.json`` fetched from the Hub and cached in
``litellm.known_tokenizer_config[model]``, then its ``chat_template`` rendered by
``_render_chat_template`` in a jinja2 ``ImmutableSandboxedEnvironment``. This adapter goes through
that same entry point: it puts the template, ``bos_token`` and ``eos_token`` in
``litellm.known_tokenizer_config`` under a model name no built-in template claims (what the fetch
would have cached; nothing is fetched) and calls ``prompt_factory(model, messages)``. Before it the
server does nothing to the messages (they are the request's); after it, nothing to the prompt.

So the request reaches the template as litellm reads it, and what litellm leaves out is left out:

- only ``messages``, ``bos_token`` and ``eos_token`` reach the template; ``tools``, ``documents``,
  ``continue_final_message`` and every other variable do not (``prompt_factory`` takes none), and
  ``add_generation_prompt`` is always true;
- its environment has neither ``trim_blocks`` nor ``lstrip_blocks``, and its ``raise_exception``
  returns an exception instead of raising it (the template prints it);
- a template that cannot render a lone system message has system messages sent as user ones;
- an error anywhere in the template gives ``default_pt``'s prompt (the contents joined by spaces),
  never an error.

    >>> render_chat("{% for m in messages %}{{ m.content }}{% endfor %}"
    ...             "{% if add_generation_prompt %}>{% endif %}", [{"role": "user", "content": "hi"}])
    'hi>'
"""
from __future__ import annotations

import os

from . import engine_version, require

# litellm fetches its model cost map from GitHub when imported unless told to read its own copy:
# with no network that fetch waits for its timeout, and the map has nothing to do with templates.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = require("litellm")
factory = require("litellm", "litellm.litellm_core_utils.prompt_templates.factory")

__version__ = engine_version("litellm")
# A Hub name none of prompt_factory's built-in templates matches (llama-2, falcon, mpt, ...), so
# that it goes to hf_chat_template, which reads the cached tokenizer_config.json.
MODEL = "textbound/chat-template"
TOKEN_VARIABLES = ("bos_token", "eos_token")  # what hf_chat_template reads of tokenizer_config.json


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    """The prompt litellm sends for ``messages`` to a completion backend serving a model whose
    tokenizer_config.json holds ``template`` and ``variables``' bos and eos tokens; every other
    argument is accepted and, as litellm's entry point takes none of them, not passed on."""
    if not isinstance(template, str):
        raise TypeError(f"a chat template is a str, not {type(template).__name__}")
    tokenizer_config = {"chat_template": template,
                        **{name: variables[name] for name in TOKEN_VARIABLES if name in variables}}
    litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": tokenizer_config}
    return factory.prompt_factory(model=MODEL, messages=messages)
