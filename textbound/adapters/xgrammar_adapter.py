"""xgrammar's token masks (vLLM's and SGLang's default structured backend) as an ``--impl`` of the
structured component, run in an environment of its own (xgrammar needs torch).

    nox -s engine_xgrammar      # builds the environment, runs this adapter's tests and its field row
    TEXTBOUND_XGRAMMAR_PYTHON=ENV/bin/python textbound check \\
        --impl textbound.adapters.xgrammar_adapter --component structured

Server entry point: vLLM's xgrammar backend (``vllm/v1/structured_output/backend_xgrammar.py``):
``TokenizerInfo.from_huggingface``, ``GrammarCompiler.compile_json_schema(schema,
any_whitespace=True)``, then a ``GrammarMatcher``'s ``accept_token`` and ``fill_next_token_bitmask``.

``$TEXTBOUND_XGRAMMAR_PYTHON`` (PYTHON_ENV) names the python of an environment holding xgrammar,
torch and transformers, which runs ``engines/xgrammar/engine.py`` over the JSON-lines protocol of
textbound.adapters.jsonl_engine. The entry point is the one vLLM's server uses
(vllm/v1/structured_output/backend_xgrammar.py): ``TokenizerInfo.from_huggingface`` of the family's
Hugging Face tokenizer, ``GrammarCompiler.compile_json_schema(schema, any_whitespace=True)`` for a
``json`` structured output (``compile_regex`` for a ``regex`` one), and a ``GrammarMatcher`` driven by
``accept_token`` and ``fill_next_token_bitmask``; the engine script says how each op maps.

- ``json_schema_to_regex`` and ``tool_call_pattern`` are impl's (xgrammar compiles schemas to
  grammars, never to regexes), kept by the pattern they return: ``Constraint(pattern, tokenizer)`` of
  a pattern made from a schema compiles that schema with xgrammar's own JSON-schema converter, so
  the mask check sets xgrammar's language for the schema against the oracles' masks of impl's regex
  for it (a regex impl never made, a tool-call pattern among them, is compiled as a regex).
- ``Tokenizer`` is impl's, remembering its folder: the checks read the vocabulary's bytes through it
  for the oracles, and the family's engine process loads the same folder. Special tokens are never
  allowed (xgrammar allows its stop tokens where the grammar may end; that is ``is_complete``).
- ``parse_response`` is impl's, the reader of the calls the guarantee property decodes.

    >>> json_schema_to_regex({"type": "boolean"})
    '(?:(?:true|false))'
"""
from __future__ import annotations

import os
from pathlib import Path

from textbound.impl import Tokenizer as _ImplTokenizer
from textbound.impl import json_schema_to_regex as _impl_json_schema_to_regex
from textbound.impl import parse_response  # noqa: F401 - the calls' reader, see the docstring
from textbound.impl import tool_call_pattern  # noqa: F401 - see the docstring
from textbound.impl.structured.constraint import special_token_ids

from . import EngineMissing, engine_path, engines_folder
from . import jsonl_engine as protocol

PYTHON_ENV = "TEXTBOUND_XGRAMMAR_PYTHON"
REPLAY_ENVIRONMENT = (PYTHON_ENV,)  # set in the replay commands of a run's records
ENGINE_SCRIPT = engines_folder() / "xgrammar" / "engine.py"  # under $TEXTBOUND_ENGINES, read at import
XGRAMMAR_VERSION = "0.2.9"  # the version nox -s engine_xgrammar installs
# The schema each pattern json_schema_to_regex returned was made from, in this process (a worker
# builds the pattern of a case and then its Constraint).
_SCHEMAS: dict[str, dict] = {}


def engine(family: Path | None = None) -> protocol.EngineProcess:
    """The running xgrammar engine of this process for ``family``; EngineMissing without $TEXTBOUND_XGRAMMAR_PYTHON."""
    python = os.environ.get(PYTHON_ENV, "").strip()
    if not python or not Path(python).is_file():
        raise EngineMissing(f"textbound.adapters.xgrammar_adapter needs the python of an environment holding "
                            f"xgrammar in ${PYTHON_ENV} (found {python!r}): build one with nox -s engine_xgrammar, "
                            f"or python -m venv ENV && ENV/bin/pip install torch xgrammar=={XGRAMMAR_VERSION} "
                            f"transformers, then {PYTHON_ENV}=ENV/bin/python")
    return protocol.engine(family, command=[python, str(engine_path(ENGINE_SCRIPT))], one_family=True)


def __getattr__(name: str):
    if name == "__version__":  # read by the harness's setup: starting the engine, a broken one fails it
        return protocol.version_of(engine())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def json_schema_to_regex(schema) -> str:
    """impl's regex for ``schema``, remembered so that its Constraint compiles the schema itself."""
    pattern = _impl_json_schema_to_regex(schema)
    _SCHEMAS[pattern] = schema
    return pattern


class Tokenizer(_ImplTokenizer):
    """impl's tokenizer of a family folder, which it remembers for the folder's xgrammar engine."""

    folder: Path

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        tokenizer = super().from_dir(path)
        tokenizer.folder = Path(path)
        engine(tokenizer.folder)  # importing torch takes seconds: allowed loading a family, not in a case
        return tokenizer


class Constraint(protocol.EngineConstraint):
    """xgrammar's GrammarMatcher for the schema ``pattern`` was made from (else for ``pattern`` as a
    regex), in the engine of the tokenizer's folder; its allowed ids without special tokens."""

    def __init__(self, pattern: str, tokenizer: Tokenizer):
        process = engine(tokenizer.folder)
        schema = _SCHEMAS.get(pattern)
        handle = process.request("constraint_new", pattern=pattern, schema=schema)
        protocol._EngineObject.__init__(self, process, handle)
        self.pattern, self.schema = pattern, schema
        self.special_ids = frozenset(special_token_ids(tokenizer))

    def allowed_tokens(self, state) -> frozenset[int]:
        return super().allowed_tokens(state) - self.special_ids


__all__ = ["Constraint", "Tokenizer", "json_schema_to_regex", "parse_response", "tool_call_pattern"]
