"""Hugging Face ``tokenizers`` itself as an ``--impl``: the harness's sanity check.

    textbound check --impl textbound.adapters.tokenizers_adapter --component tokenizer,detokenizer

The tokenizer and detokenizer components are checked against ``tokenizers`` (the oracle), so every
divergence this adapter shows is a bug in the harness (a check, a case, the protocol), never in the
engine: it must report nothing.

- ``Tokenizer`` is the oracle's wrapper of ``tokenizers.Tokenizer`` (truncation and padding off).
- ``IncrementalDetokenizer`` streams by whole decodes: after each ``add`` it decodes every id so
  far, and again with a *probe* id appended (the first id that decodes alone to U+FFFD, a stray
  byte that breaks any unfinished character; and the first plain letter, which ends whatever a
  decoder does to a last token); it shows the common prefix, less trailing U+FFFDs (bytes of a
  character still arriving). Quadratic in the stream's length, which is fine for checking.
  DecodeStream is not used: it shows a byte-fallback run as soon as it decodes, and when a later
  byte turns the run into U+FFFDs it has shown text the whole decode does not have.

Server entry point: none of its own (the library is the oracle); the servers that load a
tokenizer.json (vLLM, SGLang, TGI) reach ``Tokenizer.encode``/``decode`` through transformers as
``Tokenizer`` does here, and stream with ``DecodeStream`` or offsets, which ``IncrementalDetokenizer``
is deliberately not (above): this adapter checks the harness, not a server.

    >>> tok = Tokenizer.from_dir(path)                                   # doctest: +SKIP
    >>> d = IncrementalDetokenizer(tok, prompt_ids=tok.encode("Hi"))     # doctest: +SKIP
    >>> d.prompt_text, d.add(tok.encode(" there")), d.flush()            # doctest: +SKIP
    ('Hi', ' there', '')
"""
from __future__ import annotations

import functools

from . import engine_version, require

require("tokenizers")
from textbound.oracles.tokenizers_oracle import TokenizersOracle  # noqa: E402

from ..naming.divergence import REPLACEMENT_CHARACTER  # noqa: E402

__version__ = engine_version("tokenizers")


class Tokenizer(TokenizersOracle):
    """``tokenizers.Tokenizer`` with impl's Tokenizer names: the oracle's own wrapper (truncation and
    padding off), plus ``token_to_id`` and the detokenizer's probes."""

    def token_to_id(self, token: str) -> int | None:
        return self.tokenizer.token_to_id(token)

    @functools.cached_property
    def probe_ids(self) -> list[int]:
        """The first non-special id decoding alone to U+FFFD, and the first decoding to one ASCII letter."""
        ids = sorted(set(self.vocab().values()) - self.special_ids)
        alone = self.decode_batch([[i] for i in ids])
        stray = next((i for i, text in zip(ids, alone) if text == REPLACEMENT_CHARACTER), None)
        letter = next((i for i, text in zip(ids, alone) if len(text) == 1 and text.isascii() and text.isalpha()), None)
        return [i for i in (stray, letter) if i is not None]


class IncrementalDetokenizer:
    """Streamed decoding by whole decodes and probes (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True, prompt_ids=None):
        self._tokenizer, self._skip = tokenizer, skip_special_tokens
        self._ids = list(prompt_ids or [])
        self._shown = self._settled()  # prompt_text + text
        self.prompt_text = self._shown
        self.text = ""

    def add(self, ids) -> str:
        self._ids += list(ids)
        return self._show(self._settled())

    def flush(self) -> str:
        return self._show(self._tokenizer.decode(self._ids, self._skip))

    def _settled(self) -> str:
        """The text no id appended to the ones so far can change (as far as the probes tell)."""
        if not self._ids:
            return ""
        whole, *probed = self._tokenizer.decode_batch(
            [self._ids, *(self._ids + [probe] for probe in self._tokenizer.probe_ids)], self._skip)
        settled = whole
        for text in probed:
            settled = settled[:next((i for i, (a, b) in enumerate(zip(settled, text)) if a != b),
                                    min(len(settled), len(text)))]
        return settled.rstrip(REPLACEMENT_CHARACTER)

    def _show(self, text: str) -> str:
        """The part of ``text`` beyond what was shown (text shown is never taken back)."""
        delta = text[len(self._shown):]
        self._shown += delta
        self.text += delta
        return delta
