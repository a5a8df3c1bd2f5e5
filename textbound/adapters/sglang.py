"""SGLang's tool-call and reasoning parsers (the ``tools`` component), its tokenizer loading and its
detokenizer manager's incremental decode (``tokenizer``, ``detokenizer``) as an ``--impl``, run in an
environment of its own.

    python -m venv ENV && ENV/bin/pip install sglang==0.5.23 --no-deps   # then what its parsers import
    TEXTBOUND_SGLANG_PYTHON=ENV/bin/python textbound check --impl textbound.adapters.sglang --component tools

sglang pins GPU-only packages (torch 2.14.1's CUDA build, flashinfer...), but its function-call
detectors and reasoning parsers import on the CPU with a handful of packages; README.md lists them.
``$TEXTBOUND_SGLANG_PYTHON`` (PYTHON_ENV) names that environment's python, which runs
``engines/sglang/engine.py`` (it documents what each op calls) over the JSON-lines protocol of
textbound.adapters.jsonl_engine. ``assemble`` is impl's: merging deltas is the OpenAI client's job.
The engine dies with the process that started it. The detokenizer's module
(sglang.srt.managers.detokenizer_manager) imports torch and the server's packages (setproctitle,
pyzmq, fastapi, uvicorn, uvloop, einops, dill, sentencepiece, compressed-tensors, gguf, torchvision):
without them a family's engine refuses to load, saying which is missing. The parsers are
driven through the server's own chat serving (sglang.srt.entrypoints.openai.serving_chat, which
needs jsonschema too): without it a parser's first request answers with the import error.

Server entry point: per component, what ``sglang.launch_server`` runs, listed in
engines/sglang/engine.py's docstring: tools ``OpenAIServingChat`` itself, its
``_generate_chat_stream`` fed a batch per feed and ``_handle_non_streaming_request``, with only the
tokenizer manager a stand-in; the tokenizer ``get_tokenizer`` loads and the detokenizer manager's
incremental decode.

    >>> parse_response('<tool_call>{"name": "f", "arguments": {}}</tool_call>', "hermes",
    ...                tools=[{"type": "function", "function": {"name": "f"}}])["tool_calls"][0]["function"]
    ... # doctest: +SKIP
    {'name': 'f', 'arguments': '{}'}
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

from textbound.impl.tools import assemble

from . import EngineMissing, engine_path, engines_folder
from . import jsonl_engine as protocol

PYTHON_ENV = "TEXTBOUND_SGLANG_PYTHON"
REPLAY_ENVIRONMENT = (PYTHON_ENV,)  # set in the replay commands of a run's records
ENGINE_SCRIPT = engines_folder() / "sglang" / "engine.py"  # under $TEXTBOUND_ENGINES, read at import


def engine(family: Path | None = None) -> protocol.EngineProcess:
    """The running SGLang engine of this process for ``family`` (None: family-less requests);
    EngineMissing without $TEXTBOUND_SGLANG_PYTHON."""
    python = os.environ.get(PYTHON_ENV, "").strip()
    if not python or not Path(python).is_file():
        raise EngineMissing(f"textbound.adapters.sglang needs the python of an environment holding sglang in "
                            f"${PYTHON_ENV} (found {python!r}): see this module's docstring")
    return protocol.engine(family, command=[python, str(engine_path(ENGINE_SCRIPT))], one_family=True)


def __getattr__(name: str):
    if name == "__version__":  # read by the harness's setup: starting the engine, a broken one fails it
        return protocol.version_of(engine())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Tokenizer(protocol.EngineTokenizer):
    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(engine(Path(path)))


IncrementalDetokenizer = protocol.EngineDetokenizer  # in the tokenizer's own engine


class OutputParser(protocol.EngineOutputParser):
    family_less = staticmethod(engine)


parse_response = functools.partial(protocol.parse_response_in, engine)


__all__ = ["IncrementalDetokenizer", "OutputParser", "Tokenizer", "assemble", "parse_response"]
