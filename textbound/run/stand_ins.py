"""Oracle-backed stand-ins for the implementation's public names, swapped in one at a time: where a
check that diverged agrees once a name answers as the oracle does, the divergence comes from that
name (textbound.run.evidence, naming a root cause's ``culprit``).

    >>> swapped = swap(subject, "IncrementalDetokenizer")      # impl's detokenizer over the oracle's decode
    >>> run_check(swapped, stops_pipeline_case) is None          # a detokenizer's bug, not the stop checker's
    True

``Tokenizer.encode`` and ``Tokenizer.decode`` keep the implementation's tokenizer and answer that one
method by the oracle (a shallow copy whose instance attribute shadows the method, so what the
tokenizer's own methods and an IncrementalDetokenizer built on it encode or decode goes through the
oracle too); ``IncrementalDetokenizer`` is the tokenizers adapter's, over the oracle's own tokenizer;
``StopChecker`` streams by oracles.stop_reference; ``render_chat`` is transformers' render;
``parse_response`` oracles.tool_reference's parse in OpenAI's shape.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass

from textbound.oracles.stop_reference import held_back_reference, stop_outcome

from ..adapters.contract import Tokenizer as TokenizerProtocol
from ..adapters.contract import checked_as, unchecked
from ..checks import Subject
from ..plan.implementation import Implementation

SWAPPABLE = ("Tokenizer.encode", "Tokenizer.decode", "IncrementalDetokenizer", "StopChecker", "render_chat",
             "parse_response")


def tokenizer_with(tokenizer, name: str, method: Callable):
    """A shallow copy of the implementation's tokenizer whose method ``name`` is ``method``: its own
    methods calling ``self.<name>`` call the stand-in too (``apply_chat_template`` encoding its text).
    A tokenizer reached through its contract (the checks' is) is copied behind it and checked again:
    ``tokenizer_with(checked_as(t, Tokenizer), "encode", f).encode("a") == f("a")``."""
    own = unchecked(tokenizer)
    clone = copy.copy(own)
    setattr(clone, name, method)
    return clone if own is tokenizer else checked_as(clone, TokenizerProtocol)


class ReferenceStopChecker:
    """A stop checker that answers as oracles.stop_reference: it releases all but the longest tail
    that may begin a stop, and cuts at the reference's stop on the whole text seen so far."""

    def __init__(self, stops, include_stop: bool = False):
        self._stops, self._include = list(stops), include_stop
        self._seen, self._released = "", 0
        self.stop_string = None

    @property
    def stopped(self) -> bool:
        return self.stop_string is not None

    def add(self, delta: str) -> str:
        if self.stopped:
            return ""
        self._seen += delta
        outcome = stop_outcome(self._seen, self._stops, self._include)
        if outcome.stopped:
            self.stop_string = outcome.stop_string
            return self._release(len(outcome.output))
        return self._release(len(self._seen) - held_back_reference(self._seen, self._stops))

    def finish(self) -> str:
        return "" if self.stopped else self._release(len(self._seen))

    def _release(self, end: int) -> str:
        text, self._released = self._seen[self._released:end], max(self._released, end)
        return text


def reference_parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False) -> dict:
    """oracles.tool_reference's parse as an OpenAI chat-completion message."""
    from textbound.oracles import tool_reference

    message = tool_reference.parse(text, format, tools=tools, reasoning=reasoning,
                                   starts_in_reasoning=starts_in_reasoning).message()
    calls = [{"id": f"call_{index}", "type": "function",
              "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
             for index, call in enumerate(message["calls"])]
    content = message["content"] or (None if calls else "")
    return {"role": "assistant", "content": content, "reasoning_content": message["reasoning_content"] or None,
            "tool_calls": calls}


def reference_render_chat(template, messages, **arguments) -> str:
    """transformers' render of the request (what chat/render compares with)."""
    from textbound.oracles.chat_oracle import render
    return render(template, messages, **arguments)


class Swapped:
    """An implementation with some of its public names answered by stand-ins."""

    def __init__(self, impl: Implementation, names: dict[str, object]):
        self.impl, self.names = impl, names
        self.name = f"{impl.name} with {', '.join(names)} swapped for the oracle's"

    def __getattr__(self, name: str):
        return self.names[name] if name in self.names else getattr(self.impl, name)


@dataclass
class OracleTokenizers:
    """The tokenizers adapter's tokenizer of one family, loaded once (the stand-in detokenizer's)."""

    path: str
    _loaded: object = None

    def get(self):
        if self._loaded is None:
            from textbound.adapters.tokenizers_adapter import Tokenizer
            self._loaded = Tokenizer.from_dir(self.path)
        return self._loaded


def swap(subject: Subject, name: str, oracle_tokenizer: OracleTokenizers) -> Subject | None:
    """``subject`` with ``name`` (one of SWAPPABLE) answered by its stand-in, the loaded tokenizers
    and per-family facts shared; None where the implementation lacks what the name stands in for."""
    impl, tokenizer, names = subject.impl, None, {}
    if name in ("Tokenizer.encode", "Tokenizer.decode"):
        if not impl.provides("tokenizer"):
            return None
        oracle = subject.oracle
        if name == "Tokenizer.encode":
            tokenizer = tokenizer_with(subject.tokenizer, "encode", lambda text, add_special_tokens=True:
                                       oracle.encode(text, add_special_tokens))
        else:
            tokenizer = tokenizer_with(subject.tokenizer, "decode", lambda ids, skip_special_tokens=False:
                                       oracle.decode(list(ids), skip_special_tokens))
    elif name == "IncrementalDetokenizer":
        from textbound.adapters.tokenizers_adapter import IncrementalDetokenizer

        def detokenizer(_tokenizer, skip_special_tokens=True, prompt_ids=None):
            return IncrementalDetokenizer(oracle_tokenizer.get(), skip_special_tokens, prompt_ids)
        names = {"IncrementalDetokenizer": detokenizer}
    else:
        names = {name: {"StopChecker": ReferenceStopChecker, "render_chat": reference_render_chat,
                        "parse_response": reference_parse_response}[name]}
    swapped = Subject(subject.family, subject.path, Swapped(impl, names), subject.cache)
    swapped.__dict__["oracle"] = subject.oracle
    if tokenizer is not None or "tokenizer" in subject.__dict__:  # loaded once, by the check that diverged
        swapped.__dict__["tokenizer"] = tokenizer or subject.tokenizer
    return swapped
