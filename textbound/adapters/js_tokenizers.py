"""Tokenizers in JavaScript: ``@huggingface/tokenizers`` (the tokenizers of transformers.js) as an ``--impl``.

    npm ci --prefix engines/js      # once: the pinned packages into engines/js/node_modules
    textbound check --impl textbound.adapters.js_tokenizers --component tokenizer,detokenizer

The engine is ``node engines/js/tokenizer_engine.mjs``, one process per family, over the JSON-lines
protocol of textbound.adapters.jsonl_engine (it reads the family's tokenizer.json and
tokenizer_config.json from disk; decoding never cleans up spaces, as tokenizers). The tokenizer
component runs through the generic adapter too
(``TEXTBOUND_ENGINE_CMD="node engines/js/tokenizer_engine.mjs"``).

The library has no streamed decode, so ``IncrementalDetokenizer`` is the whole-decode one of
textbound.adapters.tokenizers_adapter over this engine's ``decode_batch``: after each ``add`` it
decodes every id so far, with and without probe ids appended, and shows what they agree on. The
probe ids (which decode alone to U+FFFD, or to one ASCII letter) are chosen by reading the
family's vocabulary with tokenizers: the choice is the harness's, every decode is the engine's.

Server entry point: none (transformers.js has no server): ``encode``/``decode`` of
``new Tokenizer(json, config)`` as transformers.js' PreTrainedTokenizer calls them
(engines/js/tokenizer_engine.mjs).

    >>> tok = Tokenizer.from_dir(path)                                   # doctest: +SKIP
    >>> tok.encode("Hi there"), tok.decode([13048, 1052])                # doctest: +SKIP
    ([13048, 1052], 'Hi there')
"""
from __future__ import annotations

import functools
from pathlib import Path

from . import tokenizers_adapter
from .hf_jinja import engine_description, node_engine
from .jsonl_engine import EngineTokenizer

TOKENIZER_ENGINE = "tokenizer_engine.mjs"
TOKENIZER_PACKAGE = "@huggingface/tokenizers"


class Tokenizer(EngineTokenizer):
    """A family's tokenizer in the node engine, with what the whole-decode detokenizer needs."""

    def __init__(self, process, path: Path):
        super().__init__(process)
        self.path = Path(path)

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(node_engine(TOKENIZER_ENGINE, TOKENIZER_PACKAGE, Path(path)), Path(path))

    def decode_batch(self, batch: list[list[int]], skip_special_tokens: bool = False) -> list[str]:
        return self.engine.request("decode_batch", batch=[list(ids) for ids in batch],
                                   skip_special_tokens=skip_special_tokens)

    @functools.cached_property
    def probe_ids(self) -> list[int]:
        return tokenizers_adapter.Tokenizer.from_dir(self.path).probe_ids


IncrementalDetokenizer = tokenizers_adapter.IncrementalDetokenizer


def __getattr__(name: str):
    if name == "__version__":  # read by the harness's setup: starting the engine, a broken one fails it
        return engine_description(node_engine(TOKENIZER_ENGINE, TOKENIZER_PACKAGE))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
