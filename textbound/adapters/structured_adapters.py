"""outlines-core and llguidance behind impl's structured names: what the two ``--impl`` modules
``outlines_core_adapter`` and ``llguidance_adapter`` share.

    textbound check --impl textbound.adapters.outlines_core_adapter --component structured
    textbound check --impl textbound.adapters.llguidance_adapter --component structured

- ``json_schema_to_regex``: outlines-core's ``build_regex_from_schema`` (its default whitespace);
  llguidance compiles schemas to grammars, never to regexes, so its adapter uses impl's regexes and
  is checked on what it does with them: masks.
- ``tool_call_pattern``: a call's wrapper text in the format (hermes, llama3_json, mistral, as
  impl.structured.tool_call.FORMATS writes them) around the engine's regex for the arguments;
  neither engine knows tool-call formats.
- ``Constraint(pattern, tokenizer)``: the engine's token mask for the regex over the tokenizer's
  ``vocab_bytes()``, special tokens never allowed: outlines-core's ``Index``, llguidance's
  ``LLMatcher`` (whose ``compute_bitmask`` is taken as is, also where it forces text).
- ``Tokenizer`` is impl's: the structured checks read the vocabulary's bytes through it, for the
  engines and the oracles alike; ``parse_response`` is impl's too, the reader of the calls the
  guarantee property decodes (neither engine parses tool calls). Run these adapters with
  ``--component structured``: their other components would be impl's.

Server entry point: vLLM's structured-output backends: ``backend=outlines`` compiles a schema with
outlines-core's ``build_regex_from_schema`` and masks with its ``Index``/``Guide``
(vllm/v1/structured_output/backend_outlines.py), ``backend=guidance`` with llguidance's
``LLMatcher`` (backend_guidance.py), there from the schema itself, here from impl's regex
(llguidance writes no regex of a schema to compare).

    >>> tool_call_pattern(lambda schema: "[{][}]", [{"type": "function", "function": {"name": "ping"}}],
    ...                   format="llama3_json")
    '(\\\\{[ ]?"name"[ ]?:[ ]?"ping"[ ]?,[ ]?"parameters"[ ]?:[ ]?([{][}])[ ]?\\\\})'
"""
from __future__ import annotations

import json
from collections.abc import Callable

from textbound.impl import regex_escape
from textbound.impl.structured.constraint import special_token_ids
from textbound.impl.structured.tool_call import FORMATS, called_functions

from . import require

require("outlines-core", "outlines_core")
require("llguidance")
from textbound.oracles.structured_oracles import (LlguidanceMask, OutlinesMask, TokenVocabulary,  # noqa: E402
                                        llguidance_regex_grammar, mask_ids)

# Whitespace the tool-call wrapper allows between its own tokens (json.dumps writes none or one space).
WRAPPER_SPACE = r"[ ]?"


def tool_call_pattern(schema_to_regex: Callable[[dict], str], tools, *, name: str | None = None,
                      format: str = "hermes") -> str:
    """A regex for one call of one of ``tools`` (of ``name`` when given) in ``format``, the arguments
    by ``schema_to_regex``; a mistake (an unknown format or tool, no tools) raises ValueError naming
    it, as impl's does. (impl's own cannot be reused: it compiles the arguments with impl's regexes.)"""
    if format not in FORMATS:
        raise ValueError(f"unknown tool-call format {format!r}; known: {sorted(FORMATS)}")
    functions = called_functions(tools, name)
    before, arguments_key, after = FORMATS[format]
    colon, comma = f"{WRAPPER_SPACE}:{WRAPPER_SPACE}", f"{WRAPPER_SPACE},{WRAPPER_SPACE}"
    calls = [
        r"\{" + WRAPPER_SPACE + regex_escape(json.dumps("name")) + colon + regex_escape(json.dumps(function["name"]))
        + comma + regex_escape(json.dumps(arguments_key)) + colon
        + f"({schema_to_regex(function.get('parameters') or {'type': 'object', 'properties': {}})})"
        + WRAPPER_SPACE + r"\}"
        for function in functions]
    return regex_escape(before) + "(" + "|".join(calls) + ")" + regex_escape(after)


def token_vocabulary(tokenizer) -> TokenVocabulary:
    """The tokenizer's vocabulary as the engines read it: bytes per id, special ids never text."""
    return TokenVocabulary(tuple(tokenizer.vocab_bytes()), frozenset(special_token_ids(tokenizer)), tokenizer.encode)


class EngineConstraint:
    """impl's Constraint names over an engine's mask (an oracles.structured_oracles mask)."""

    def __init__(self, mask, vocabulary: TokenVocabulary):
        self.mask, self.vocabulary = mask, vocabulary

    def start(self):
        return self.mask.start()

    def advance(self, state, token_id: int):
        following = self.mask.advance(state, token_id)
        if following is None:
            raise ValueError(f"token {token_id!r} is not allowed here")
        return following

    def allowed_tokens(self, state) -> frozenset[int]:
        return self.mask.allowed(state) & self.vocabulary.text_ids

    def is_complete(self, state) -> bool:
        return self.mask.complete(state)


class OutlinesConstraint(EngineConstraint):
    """outlines-core's Index for ``pattern``."""

    def __init__(self, pattern: str, tokenizer):
        vocabulary = token_vocabulary(tokenizer)
        super().__init__(OutlinesMask(pattern, vocabulary), vocabulary)


class LlguidanceConstraint(EngineConstraint):
    """llguidance's matcher for ``pattern``; its mask is its bitmask, also where it forces text."""

    def __init__(self, pattern: str, tokenizer):
        vocabulary = token_vocabulary(tokenizer)
        super().__init__(LlguidanceMask(llguidance_regex_grammar(pattern), vocabulary), vocabulary)

    def allowed_tokens(self, state) -> frozenset[int]:
        return mask_ids(state.compute_bitmask()) & self.vocabulary.text_ids
