"""vLLM's own text boundary as an ``--impl``: its tokenizer wrapper, v1 incremental detokenizer, stop
strings, the OpenAI server's chat preparation and its tool/reasoning parsers, run in an environment
of its own.

    nox -s engine_vllm      # builds the environment and runs this adapter's tests and checks
    TEXTBOUND_VLLM_PYTHON=ENV/bin/python textbound check --impl textbound.adapters.vllm \\
        --component tokenizer,detokenizer,stops,chat,tools

vllm pins transformers and llguidance below the harness's oracles, so it never shares the harness's
environment: ``$TEXTBOUND_VLLM_PYTHON`` (PYTHON_ENV) names the python of an environment holding
vllm, which runs ``engines/vllm/engine.py`` over the JSON-lines protocol of
textbound.adapters.jsonl_engine (that script documents what each op calls in vLLM). Unset, reading
``__version__`` (the harness's setup) raises ``EngineMissing`` saying how to build one.

- ``$TEXTBOUND_VLLM_DETOKENIZER`` (DETOKENIZER_ENV): ``fast`` (default: tokenizers' DecodeStream,
  what the server uses with a fast tokenizer) or ``slow`` (``detokenize_incrementally``).
- ``$TEXTBOUND_VLLM_TOOLS_TOKENIZER`` (TOOLS_TOKENIZER_ENV): the family folder whose tokenizer, with
  each format's markers added as special tokens, the tool parsers get and stream ids of; default
  the embedded ``qwen`` family (TOOLS_FAMILY). The parsers run without a family, as the checks
  call them.
- chat: ``render_chat`` and ``Tokenizer.apply_chat_template`` are the server's preparation of a
  chat-completion request carrying the case's messages, tools, documents and variables (as
  ``chat_template_kwargs``), rendered with the template as the server's ``--chat-template``.
- ``assemble`` is impl's: merging deltas is the OpenAI client's job, which vLLM does not ship.

Server entry point: per component, what ``vllm serve``'s OpenAI front end calls, listed in
engines/vllm/engine.py's docstring: the output processor's ``IncrementalDetokenizer.from_new_request``
stepped by ``update``/``get_next_output_text``, ``OpenAIServingChat``'s chat preparation, and its
``ChatStreamProcessor.step`` per delta with the delta's token ids, the prompt's ids and a last step
carrying the end-of-turn id and finish reason (``Parser.parse`` with the output's ids, whole).

    >>> tok = Tokenizer.from_dir(path)                                   # doctest: +SKIP
    >>> tok.encode("Hi there"), tok.decode([13048, 1052])                # doctest: +SKIP
    ([13048, 1052], 'Hi there')
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

from textbound.impl.tools import assemble

from . import EngineMissing, engine_path, engines_folder
from . import jsonl_engine as protocol

PYTHON_ENV = "TEXTBOUND_VLLM_PYTHON"
DETOKENIZER_ENV = "TEXTBOUND_VLLM_DETOKENIZER"
TOOLS_TOKENIZER_ENV = "TEXTBOUND_VLLM_TOOLS_TOKENIZER"
REPLAY_ENVIRONMENT = (PYTHON_ENV, DETOKENIZER_ENV, TOOLS_TOKENIZER_ENV)  # set in the replay commands of a run's records
DETOKENIZERS = ("fast", "slow")
TOOLS_FAMILY = "qwen"
ENGINE_SCRIPT = engines_folder() / "vllm" / "engine.py"  # under $TEXTBOUND_ENGINES, read at import
VLLM_VERSION = "0.33.0"  # the version nox -s engine_vllm installs


def engine_command() -> list[str]:
    """The engine's command line; EngineMissing without $TEXTBOUND_VLLM_PYTHON, ValueError for a bad
    $TEXTBOUND_VLLM_DETOKENIZER."""
    python = os.environ.get(PYTHON_ENV, "").strip()
    if not python:
        raise EngineMissing(f"textbound.adapters.vllm needs the python of an environment holding vllm in "
                            f"${PYTHON_ENV}: build one with nox -s engine_vllm, or python -m venv ENV && "
                            f"ENV/bin/pip install vllm=={VLLM_VERSION}, then {PYTHON_ENV}=ENV/bin/python")
    if not Path(python).is_file():
        raise EngineMissing(f"${PYTHON_ENV}={python}: no such file")
    detokenizer = os.environ.get(DETOKENIZER_ENV, "fast").strip()
    if detokenizer not in DETOKENIZERS:
        raise ValueError(f"${DETOKENIZER_ENV}={detokenizer!r}: expected one of {', '.join(DETOKENIZERS)}")
    return [python, str(engine_path(ENGINE_SCRIPT)), "--detokenizer", detokenizer, "--tools-base", str(tools_family())]


def tools_family() -> Path:
    if os.environ.get(TOOLS_TOKENIZER_ENV):
        return Path(os.environ[TOOLS_TOKENIZER_ENV]).resolve()
    from textbound.families import build_family
    return build_family(TOOLS_FAMILY)


def engine(family: Path | None = None) -> protocol.EngineProcess:
    """The running vLLM engine of this process for ``family`` (None: family-less requests); one
    family's at a time, each holding about a gigabyte."""
    return protocol.engine(family, command=engine_command(), one_family=True)


def __getattr__(name: str):
    if name == "__version__":  # read by the harness's setup: starting the engine, a broken one fails it
        return protocol.version_of(engine())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Tokenizer(protocol.EngineChatTokenizer):
    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        # The family-less process (stops, chat text, tools) is started here too: importing vllm takes a
        # minute, which the harness allows loading a family but not a case.
        engine()
        return cls(engine(Path(path)))


IncrementalDetokenizer = protocol.EngineDetokenizer  # in the tokenizer's own engine


class StopChecker(protocol.EngineStopChecker):
    family_less = staticmethod(engine)


class OutputParser(protocol.EngineOutputParser):
    family_less = staticmethod(engine)


# The server's chat preparation of a request of ``messages`` with ``template`` as its
# --chat-template: render_chat("{{ messages[0].content }}", [{"role": "user", "content": "Hi"}]) -> "Hi"
render_chat = functools.partial(protocol.render_chat_in, engine)
parse_response = functools.partial(protocol.parse_response_in, engine)


__all__ = ["IncrementalDetokenizer", "OutputParser", "StopChecker", "Tokenizer", "assemble", "parse_response",
           "render_chat"]
