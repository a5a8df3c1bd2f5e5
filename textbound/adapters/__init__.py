"""Adapters: engines people run, made ``--impl`` modules, and the contract they all follow.

``textbound check --impl MODULE`` reaches the implementation under test only through the public
names of MODULE. An adapter is a module exposing some of these names around an engine; a component
or property whose names it lacks (textbound.plan.implementation.PROPERTY_NAMES: the names each
property calls) is reported "not provided", never passed nor failed.

The contract: ``contract``
--------------------------
``textbound.adapters.contract`` is the one reference of every public name's signature and return
type: a ``typing.Protocol`` per component of the names a module exposes (``TokenizerNames``,
``DetokenizerNames``, ``StopsNames``, ``ChatNames``, ``ToolsNames``, ``StructuredNames``) and one per
object they make (``Tokenizer``, ``IncrementalDetokenizer``, ``StopChecker``, ``OutputParser``,
``Constraint``), with what each returns. impl/ implements all of it (its docstrings give the
semantics). The checks call an engine only through it: a value of the wrong type, a member missing,
or an exception where no check expects one is the engine's divergence of kind ``contract``
(``contract: Tokenizer.decode returned bytes, expected str``), never a harness error; a
``Tokenizer.from_dir`` that raises on a family is the run not set up (exit 2).

Errors: bad input raises (ValueError, TypeError...) with a message naming what and where; the
checks compare exception classes only where the oracle raises too (chat), else an exception where
a check calls the engine is a divergence of kind "raised <class>".

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
- ``textbound.adapters.mlx_lm_adapter``: mlx-lm's streaming detokenizers and its OpenAI server's
  tool-call and reasoning handling (``handle_completion`` itself), in process (``pip install -e .[mlx-lm]``;
  nox -s engine_mlx_lm).
- ``textbound.adapters.litellm_adapter``: litellm's own rendering of chat templates for its
  completion backends (sagemaker, replicate, triton...), through its ``prompt_factory``.
- ``textbound.adapters.mistralrs_adapter``: mistral.rs's GGUF tokenizer, on a family's tiny GGUF.
- ``textbound.adapters.xgrammar_adapter``: xgrammar's masks (vLLM's xgrammar backend's calls: its own
  JSON-schema converter), run by the python of an environment of its own (``$TEXTBOUND_XGRAMMAR_PYTHON``;
  nox -s engine_xgrammar).
- ``textbound.adapters.vllm``: vLLM's tokenizer, detokenizers, stop strings, its OpenAI server's chat
  preparation (text and ids) and tool parsers, run by the python of an environment of its own
  (``$TEXTBOUND_VLLM_PYTHON``; nox -s engine_vllm).

Every adapter drives its engine through the entry point the engine's own server uses, with the
server's pre- and post-steps (a finish or flush step, token ids beside text, the prompt's reasoning
state), and says so in its docstring on a line beginning ``Server entry point:``
(SERVER_ENTRY_POINT), as does each engine script under ``engines/``; an engine with no server says
which caller it follows. A reproducer of an engine bug calls the engine the same way: a finding made
below the server's entry point may be the adapter's, not the engine's
(tests/test_adapter_entry_points.py checks that every module names it).

An adapter configured by environment variables lists their names in ``REPLAY_ENVIRONMENT``
(textbound.plan.implementation), so that the replay command of each record sets them as the run had
them: ``TEXTBOUND_ENGINE_CMD='node e.js' textbound replay --impl textbound.adapters.jsonl_engine ...``.

An adapter's engine is an optional dependency: without it the module raises ``EngineMissing`` (an
ImportError naming the package and the extra of textbound that installs it: ``engines`` for
minijinja, ``llama-cpp`` for llama-cpp-python, ``mlx-lm``, ``litellm`` and ``mistralrs`` for those
engines, the oracle libraries' own, textbound.oracles.LIBRARIES, for tiktoken, outlines-core, llguidance and mistral-common) when imported, and ``--impl`` reports
it as a run that cannot be set up.
The engines that run in environments of their
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
# The extra of each engine that is not one of the oracles' libraries (those say their own).
ENGINE_EXTRAS = {"minijinja": ENGINES_EXTRA, "llama-cpp-python": "llama-cpp", "mlx-lm": "mlx-lm", "litellm": "litellm",
                 "mistralrs": "mistralrs"}
# What begins the docstring line where an adapter or engine script names its server's entry point.
SERVER_ENTRY_POINT = "Server entry point:"


class EngineMissing(ImportError):
    """An adapter's engine is not installed: ``pip install 'textbound[engines]'`` (or the extra named)."""


def install_hint(package: str) -> str:
    """What installs ``package`` with textbound: ``install_hint("minijinja") == "pip install 'textbound[engines]'"``;
    ``install_hint("tiktoken") == "pip install 'textbound[second-oracles]'"``."""
    from textbound.oracles import LIBRARIES  # here, not at import: serving a module needs no oracle's table
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
