"""llama-cpp-python's chat formatter as an ``--impl``: the prompt text its server renders for
``POST /v1/chat/completions`` from a model's own chat template.

    pip install -e '.[llama-cpp]'          # llama-cpp-python[server], built from its sdist
    textbound check --impl textbound.adapters.llama_cpp_python_chat --component chat

Server entry point: ``create_chat_completion`` of ``llama_cpp/server/app.py`` (``POST
/v1/chat/completions``), with its pre-steps (llama-cpp-python 0.3.36):

1. FastAPI validates the body into ``llama_cpp.server.types.CreateChatCompletionRequest`` and
   ``server/app.py``'s ``create_chat_completion`` passes ``body.model_dump(exclude=...)`` on: the
   messages become the TypedDicts of ``llama_types.ChatCompletionRequestMessage`` (keys they do not
   declare, such as ``reasoning_content``, are dropped; a role or field they do not allow is
   refused with 422, raised here as ValueError naming pydantic's first error); the tools likewise;
2. ``Llama.__init__`` (``llama.py``) made the handler of a GGUF's ``tokenizer.chat_template`` with
   ``Jinja2ChatFormatter(template, eos_token, bos_token, stop_token_ids=[eos]).to_chat_handler()``
   (unless the template is one of the three whose hand-written format it guesses instead); the
   handler calls the formatter with ``messages``, ``functions``, ``function_call``, ``tools`` and
   ``tool_choice``; ``Jinja2ChatFormatter.__call__`` renders in jinja2's ImmutableSandboxedEnvironment
   (trim/lstrip blocks, loop controls, ``{% generation %}`` passed through, its own ``tojson``), with
   ``bos_token``, ``eos_token``, ``add_generation_prompt``, ``raise_exception`` (a ValueError) and
   ``strftime_now``.

What the request cannot carry, the server cannot render, so neither does this: ``add_generation_prompt``
is always True (the formatter's default, which the server never changes), and
``continue_final_message``, ``documents`` and template variables other than ``bos_token`` and
``eos_token`` are not passed (``chat_template_kwargs`` is a server setting fixed at load time).
``bos_token``/``eos_token`` are the vocabulary's token texts in the server; here the case's (the family's).

    >>> render_chat("{{ bos_token }}{{ messages[0]['content'] }}", [{"role": "user", "content": "Hi"}],
    ...             bos_token="<s>")                                          # doctest: +SKIP
    '<s>Hi'
"""
from __future__ import annotations

from . import engine_version, require

chat_format = require("llama-cpp-python", "llama_cpp.llama_chat_format")
server_types = require("llama-cpp-python", "llama_cpp.server.types")  # pydantic models only: no server started

import pydantic  # noqa: E402 - llama_cpp.server.types imports it

__version__ = engine_version("llama-cpp-python")


def server_request(messages: list, tools: list | None) -> dict:
    """The messages and tools as the server's request model gives them on (its pre-step 1):
    ``server_request([{"role": "assistant", "content": "a", "reasoning_content": "r"}], None)["messages"]
    == [{"role": "assistant", "content": "a"}]``; ValueError where the server answers 422."""
    try:
        body = server_types.CreateChatCompletionRequest(messages=messages, tools=tools)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"llama-cpp-python's server refuses the request (422): {where}: {first['msg']}") from None
    return body.model_dump()


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    """The prompt llama-cpp-python's server renders for ``messages`` and ``tools`` with ``template``
    as a GGUF's chat template (see the module docstring for what it ignores)."""
    body = server_request(messages, tools)
    formatter = chat_format.Jinja2ChatFormatter(template=template, eos_token=variables.get("eos_token", ""),
                                                bos_token=variables.get("bos_token", ""))
    return formatter(messages=body["messages"], functions=body["functions"], function_call=body["function_call"],
                     tools=body["tools"], tool_choice=body["tool_choice"]).prompt
