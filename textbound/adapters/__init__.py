"""Adapters: engines people run, made ``--impl`` modules, and the protocol they all follow.

``textbound check --impl MODULE`` reaches the implementation under test only through the public
names of MODULE (textbound.plan.implementation: REQUIRED_NAMES per component, PROPERTY_NAMES for
properties needing more). An adapter is a module exposing some of these names around an engine; a
component whose names it lacks is reported "not provided", never passed.

The adapter protocol (impl/ is the reference of every name; its docstrings give the semantics)
--------------------------------------------------------------------------------------------
tokenizer   ``Tokenizer.from_dir(path)`` -> a tokenizer of a family folder (tokenizer.json and
            tokenizer_config.json), with
            ``encode(text, add_special_tokens=True) -> list[int]`` (True by default, as in
            tokenizers and transformers; the harness always passes it),
            ``decode(ids, skip_special_tokens=False) -> str`` (impl's also takes ``strict=True``,
            raising on an id the vocabulary lacks; the harness never passes it),
            ``token_to_id(token) -> int | None``, ``id_to_token(id) -> str | None`` and the
            property ``vocab_size`` (added tokens included). Optional: ``vocab_bytes() -> list[bytes]``
            (the bytes each id adds mid-sequence, b"" for ids not in the vocabulary: the structured
            component's masks are compared over them) and ``apply_chat_template`` (below).
detokenizer ``IncrementalDetokenizer(tokenizer, skip_special_tokens=True, prompt_ids=None)`` with
            ``add(ids) -> str`` (newly settled text), ``flush() -> str`` (the rest), and the
            attributes ``text`` (all deltas) and ``prompt_text`` (what streaming the prompt showed).
            After flush, ``prompt_text + text == decode(prompt_ids + ids)``; before it, what was
            shown is a prefix of that for every continuation (impl/streaming/detokenizer.py).
stops       ``StopChecker(stops, include_stop=False)`` with ``add(delta) -> str`` (text released),
            ``finish() -> str`` (held text at the end), ``stopped`` and ``stop_string``.
chat        ``render_chat(template, messages, *, tools=None, documents=None,
            add_generation_prompt=False, continue_final_message=False, **variables) -> str``: the
            text transformers' ``apply_chat_template(..., tokenize=False)`` renders, or an exception
            of the same class (module-qualified: ``jinja2.exceptions.TemplateError``). With
            ``Tokenizer.apply_chat_template(conversation, chat_template=None, tokenize=True,
            return_dict=False, sanitize_control_tokens=False, tools=..., ...) -> list[int]`` the
            ids properties run too (``chat_template``: None for the family's own, a name of one of
            its named templates, or a template's source).
tools       ``OutputParser(format, *, tools=None, reasoning=True, starts_in_reasoning=False)`` with
            ``feed(text, final=False) -> list[dict]`` (OpenAI chat-completion deltas);
            ``parse_response(text, format, *, tools=None, reasoning=True, starts_in_reasoning=False)
            -> dict`` (the whole message); ``assemble(deltas) -> dict`` (impl/tools/__init__.py).
structured  ``json_schema_to_regex(schema) -> str``; ``tool_call_pattern(tools, name=None,
            format="hermes") -> str``; ``Constraint(pattern, tokenizer)`` with ``start()``,
            ``advance(state, id)``, ``allowed_tokens(state) -> set[int]`` and ``is_complete(state)``
            (states hashable; impl/structured/constraint.py). The guarantee property reads the
            decoded text back with ``parse_response``.

Errors: bad input raises (ValueError, TypeError...) with a message naming what and where; the
checks compare exception classes only where the oracle raises too (chat), else any exception is
a divergence of kind "raised <class>".

The adapters here
-----------------
- ``textbound.adapters.jsonl_engine``: any engine, in any language, speaking JSON lines on its stdin
  and stdout (the engine command in ``$TEXTBOUND_ENGINE_CMD``; see that module).
- ``textbound.adapters.tokenizers_adapter``: Hugging Face ``tokenizers`` itself (must find nothing).
- ``textbound.adapters.minijinja_adapter``: chat templates rendered by ``minijinja``.
- ``textbound.adapters.mistral_common_adapter``: mistral-common's tokenization of chat requests.
- ``textbound.adapters.outlines_core_adapter`` and ``llguidance_adapter``: schema-forced decoding.
- ``textbound.adapters.vllm``: vLLM's tokenizer, detokenizers, stop strings, its OpenAI server's chat
  preparation (text and ids) and tool parsers, run by the python of an environment of its own
  (``$TEXTBOUND_VLLM_PYTHON``; nox -s engine_vllm).

An adapter's engine is an optional dependency: without it the module raises ``EngineMissing`` (an
ImportError naming the package and the extra of textbound that installs it: ``engines`` for
minijinja, ``llama-cpp`` for llama-cpp-python, the oracle libraries' own, textbound.oracles.LIBRARIES,
for tiktoken, outlines-core, llguidance and mistral-common) when imported, and ``--impl`` reports
it as a run that cannot be set up.

Imports ``families``, ``server`` and ``naming`` (and impl and the oracles an adapter wraps); nothing of the
run, its records or triage.
"""
from __future__ import annotations

import importlib

from textbound.oracles import LIBRARIES

ENGINES_EXTRA = "engines"
# The extra of each engine that is not one of the oracles' libraries (those say their own).
ENGINE_EXTRAS = {"minijinja": ENGINES_EXTRA, "llama-cpp-python": "llama-cpp"}


class EngineMissing(ImportError):
    """An adapter's engine is not installed: ``pip install 'textbound[engines]'`` (or the extra named)."""


def install_hint(package: str) -> str:
    """What installs ``package`` with textbound: ``install_hint("minijinja") == "pip install 'textbound[engines]'"``;
    ``install_hint("tiktoken") == "pip install 'textbound[second-oracles]'"``."""
    library = LIBRARIES.get(package)
    extra = ENGINE_EXTRAS.get(package) or (library.extra if library else ENGINES_EXTRA)
    return f"pip install 'textbound[{extra}]'" if extra else f"pip install '{package}{library.supported}'"


def require(package: str, module: str | None = None):
    """The engine's module, imported; ``EngineMissing`` naming the package and what installs it if absent.

    >>> require("json").__name__
    'json'
    """
    name = module or package
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise EngineMissing(f"this adapter needs the {package!r} package ({exc}); install it with "
                            f"{install_hint(package)}") from exc


def engine_version(distribution: str) -> str:
    """``"tokenizers 0.23.3"``: a distribution's installed version, for ``__version__``."""
    from importlib.metadata import version
    return f"{distribution} {version(distribution)}"


def render_chat_through(environment):
    """A ``render_chat`` with impl's signature whose request is prepared and finished by
    impl.chat.ChatRenderer (as transformers prepares it) and whose template runs in another engine's
    ``environment`` (an object with ChatRenderer's compile and render): the template engine alone is
    swapped."""
    from textbound.impl.chat import ChatRenderer

    renderer = ChatRenderer()
    renderer.environment = environment

    def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                    continue_final_message=False, **variables) -> str:
        return renderer.render_chat(template, messages, tools=tools, documents=documents,
                                    add_generation_prompt=add_generation_prompt,
                                    continue_final_message=continue_final_message, **variables)
    return render_chat
