"""xgrammar's token masks behind textbound's JSON-lines protocol (textbound/adapters/jsonl_engine.py):
run by the python of an environment holding xgrammar and torch, never importing the harness.

    python engines/xgrammar/engine.py

Server entry point: vLLM's xgrammar backend (``vllm/v1/structured_output/backend_xgrammar.py``):
``TokenizerInfo.from_huggingface``, ``GrammarCompiler.compile_json_schema(schema,
any_whitespace=True)``, then a ``GrammarMatcher``'s ``accept_token`` and ``fill_next_token_bitmask``.

Driven as vLLM's xgrammar backend drives it (vllm/v1/structured_output/backend_xgrammar.py,
``XgrammarBackend`` and ``XgrammarGrammar``):

- ``load``: the family's Hugging Face tokenizer (``AutoTokenizer.from_pretrained``), then
  ``xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))`` and one
  ``xgr.GrammarCompiler`` over it, as the backend's ``__init__`` builds them (the families here have
  no model config, so the vocabulary size is the tokenizer's).
- ``constraint_new``: a request's ``schema`` is compiled as the backend compiles a ``json`` structured
  output, ``compile_json_schema(json.dumps(schema), any_whitespace=True)`` (vLLM's default: its
  ``disable_any_whitespace`` is off); a ``pattern`` without a schema as a ``regex`` one,
  ``compile_regex(pattern)``. Each makes one ``xgr.GrammarMatcher``.
- a state is the list of token ids accepted so far; ``constraint_advance`` is
  ``GrammarMatcher.accept_token`` (False: the token is refused), ``constraint_allowed`` the ids set in
  ``fill_next_token_bitmask``, ``constraint_complete`` ``GrammarMatcher.is_completed`` (the grammar
  may end here; not "a stop token is allowed": a tokenizer without an end-of-sequence token gives
  xgrammar no stop token to allow). A matcher follows
  the state it was last asked about, rolled back or reset when another state is asked for.

    -> {"id": 3, "op": "constraint_new", "schema": {"type": "boolean"}}
    <- {"id": 3, "result": 1}
"""
from __future__ import annotations

import json
import logging
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vllm"))

from protocol_loop import Handles, die_with_parent, serve, tokenizer_ops  # noqa: E402

import torch  # noqa: E402
import xgrammar as xgr  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

ANY_WHITESPACE = True  # vLLM's default (StructuredOutputsConfig.disable_any_whitespace is False)


class Matching:
    """One compiled grammar and its matcher, positioned at the accepted ids ``self.ids``."""

    def __init__(self, compiled, vocab_size: int):
        self.matcher = xgr.GrammarMatcher(compiled)
        self.ids: list[int] = []
        self.bitmask = xgr.allocate_token_bitmask(1, vocab_size)
        self.vocab_size = vocab_size

    def at(self, state: list[int]) -> None:
        """The matcher moved to ``state`` (a prefix of ids it accepted before, or a fresh walk)."""
        if self.ids == state:
            return
        if self.ids[:len(state)] == state:
            self.matcher.rollback(len(self.ids) - len(state))
            self.ids = list(state)
            return
        if state[:len(self.ids)] != self.ids:
            self.matcher.reset()
            self.ids = []
        for token in state[len(self.ids):]:
            self.accept(token)

    def accept(self, token: int) -> None:
        if not self.matcher.accept_token(token):
            raise ValueError(f"token {token!r} is not allowed here")
        self.ids.append(token)

    def advance(self, state: list[int], token: int) -> list[int]:
        self.at(state)
        self.accept(token)
        return list(self.ids)

    def complete(self, state: list[int]) -> bool:
        self.at(state)
        return self.matcher.is_completed()

    def allowed(self, state: list[int]) -> list[int]:
        self.at(state)
        self.matcher.fill_next_token_bitmask(self.bitmask)
        return allowed_ids(self.bitmask, self.vocab_size)


def allowed_ids(bitmask: torch.Tensor, vocab_size: int) -> list[int]:
    """The ids whose bits are set in row 0 of an xgrammar bitmask (32 ids per int32 word)."""
    words = bitmask[0].to(torch.int64) & 0xFFFFFFFF
    bits = (words.unsqueeze(1) >> torch.arange(32, dtype=torch.int64)) & 1
    return [i for i in torch.nonzero(bits.flatten()).flatten().tolist() if i < vocab_size]


class Family:
    """The family process's tokenizer, TokenizerInfo and GrammarCompiler, built as vLLM's backend does."""

    def __init__(self):
        self.tokenizer = self.info = self.compiler = None

    def load(self, r: dict) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(r["path"])
        self.info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=len(self.tokenizer))
        self.compiler = xgr.GrammarCompiler(self.info)

    def tok(self):
        if self.tokenizer is None:
            raise ValueError("no family loaded: this request needs a family's process")
        return self.tokenizer

    def matching(self, r: dict) -> Matching:
        self.tok()
        if r.get("schema") is not None:
            compiled = self.compiler.compile_json_schema(json.dumps(r["schema"]), any_whitespace=ANY_WHITESPACE)
        else:
            compiled = self.compiler.compile_regex(r["pattern"])
        return Matching(compiled, self.info.vocab_size)



def ops() -> dict:
    handles, family = Handles(), Family()
    answers = {
        "load": family.load,
        **tokenizer_ops(family.tok),
        "constraint_new": lambda r: handles.keep(family.matching(r)),
        "constraint_start": lambda r: [],
        "constraint_advance": lambda r: handles[r["handle"]].advance(list(r["state"]), r["token"]),
        "constraint_allowed": lambda r: handles[r["handle"]].allowed(list(r["state"])),
        "constraint_complete": lambda r: handles[r["handle"]].complete(list(r["state"])),
        "release": lambda r: handles.release(r["handles"]),
    }
    answers["hello"] = lambda r: {"engine": "xgrammar", "version": version("xgrammar"),
                                  "ops": sorted(set(answers) - {"hello"})}
    return answers


def main() -> None:
    die_with_parent()
    logging.disable(logging.WARNING)
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # anything xgrammar or transformers prints must not reach the protocol's channel
    serve(sys.stdin, protocol_out, ops())


if __name__ == "__main__":
    main()
