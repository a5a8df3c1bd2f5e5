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
- ``textbound.adapters.serve``: the other end, any ``--impl`` module served over those JSON lines
  (``python -m textbound.adapters.serve MODULE``), so that a harness in another Python environment
  checks it: ``check`` does so when the oracles here are older than the supported ones.
- ``textbound.adapters.tokenizers_adapter``: Hugging Face ``tokenizers`` itself (must find nothing).
- ``textbound.adapters.minijinja_adapter``: chat templates rendered by ``minijinja``.
- ``textbound.adapters.mistral_common_adapter``: mistral-common's tokenization of chat requests.
- ``textbound.adapters.outlines_core_adapter`` and ``llguidance_adapter``: schema-forced decoding.
- ``textbound.adapters.vllm``: vLLM's tokenizer, detokenizers, stop strings, its OpenAI server's chat
  preparation (text and ids) and tool parsers, run by the python of an environment of its own
  (``$TEXTBOUND_VLLM_PYTHON``; nox -s engine_vllm).

An adapter configured by environment variables lists their names in ``REPLAY_ENVIRONMENT``
(textbound.plan.implementation), so that the replay command of each record sets them as the run had
them: ``TEXTBOUND_ENGINE_CMD='node e.js' textbound replay --impl textbound.adapters.jsonl_engine ...``.

An adapter's engine is an optional dependency (the ``engines`` extra): without it the module
raises ``EngineMissing`` (an ImportError naming the package and the extra) when imported, and
``--impl`` reports it as a run that cannot be set up. The engines that run in environments of their
own (node's, vLLM's, SGLang's scripts) live in a checkout's ``engines/`` folder, which a wheel does
not hold: ``engines_folder`` finds it (``$TEXTBOUND_ENGINES``, else the checkout textbound runs from),
and a script that is not there is ``EngineMissing`` too.

``textbound.adapters.skeleton`` is no adapter but where one starts: ``textbound init`` writes a module
(or a JSON-lines engine) exposing the names of the components asked, each delegating to impl.

Imports ``families``, ``server``, ``naming`` and ``plan`` (the names each component needs, for the
skeleton; ``plan.implementation``, as serve loads an ``--impl`` as check does), and impl and the
oracles an adapter wraps; nothing of the run, its records or triage.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

ENGINES_EXTRA = "engines"
ENGINES_ENV = "TEXTBOUND_ENGINES"
CHECKOUT_ENGINES = Path(__file__).resolve().parents[2] / "engines"  # beside textbound/ in a checkout


class EngineMissing(ImportError):
    """An adapter's engine is not installed: ``pip install -e .[engines]``."""


def require(package: str, module: str | None = None):
    """The engine's module, imported; ``EngineMissing`` naming the package to install if absent.

    >>> require("json").__name__
    'json'
    """
    name = module or package
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise EngineMissing(f"this adapter needs the {package!r} package ({exc}); install it with "
                            f"pip install -e '.[{ENGINES_EXTRA}]'") from exc


def engines_folder() -> Path:
    """The folder of the engines run in environments of their own: ``$TEXTBOUND_ENGINES`` when set,
    else the ``engines/`` of the checkout textbound is imported from (an editable install). Installed
    from a wheel, textbound has none beside it: name a checkout's, as in
    ``TEXTBOUND_ENGINES=~/textbound/engines`` (then ``npm ci --prefix ~/textbound/engines/js`` for node's)."""
    named = os.environ.get(ENGINES_ENV, "").strip()
    return Path(named).expanduser().resolve() if named else CHECKOUT_ENGINES


def engine_path(path: Path) -> Path:
    """``path`` (a script or folder under ``engines_folder()``) when it exists; else EngineMissing
    saying where the engines were looked for and how to name them: in a wheel,
    ``engine_path(engines_folder() / "vllm" / "engine.py")`` raises "…/site-packages/engines/vllm/engine.py:
    no such file ($TEXTBOUND_ENGINES unset: the engines/ beside textbound/); set $TEXTBOUND_ENGINES to
    the engines folder of a textbound checkout (an installed wheel holds none)"."""
    if path.exists():
        return path
    named = os.environ.get(ENGINES_ENV, "").strip()
    where = f"${ENGINES_ENV}={named}" if named else f"${ENGINES_ENV} unset: the engines/ beside textbound/"
    raise EngineMissing(f"{path}: no such file ({where}); set ${ENGINES_ENV} to the engines folder of a "
                        "textbound checkout (an installed wheel holds none)")


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
