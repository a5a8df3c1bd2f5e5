"""Component checks: the single definition of "diverges".

Each check runs one case on the implementation under test and on the oracle and returns None or
a Divergence. pytest properties (properties/) and ``textbound check`` both call ``run_check``, so
they cannot disagree about what a divergence is, and either can replay what the other found.
"""
from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from oracles.tokenizers_oracle import TokenizersOracle

from .divergence import COMPONENTS, Case, Divergence, char_kind, first_index
from .implementation import Implementation

WINDOW = 3  # token pieces shown on each side of a first difference


@dataclass
class Subject:
    """One family as both sides see it: the implementation's tokenizer and the oracle's."""

    family: str
    path: Path
    impl: Implementation | None  # None where only the oracle is needed: generating cases
    cache: dict = field(default_factory=dict, repr=False)  # per-family facts checks compute once

    @cached_property
    def oracle(self) -> TokenizersOracle:
        return TokenizersOracle.from_dir(self.path)

    @cached_property
    def tokenizer(self):
        return self.impl.Tokenizer.from_dir(self.path)


Check = Callable[[Subject, Case], "Divergence | None"]
CHECKS: dict[tuple[str, str], Check] = {}
# The input field that delta debugging shrinks, per property.
MINIMIZED_FIELD: dict[tuple[str, str], str] = {}


def check(component: str, prop: str, minimize: str | None = None):
    def register(fn: Check) -> Check:
        CHECKS[(component, prop)] = fn
        if minimize:
            MINIMIZED_FIELD[(component, prop)] = minimize
        return fn
    return register


def checked_components() -> list[str]:
    """The components that have checks, in the order reports list components."""
    return [c for c in COMPONENTS if any(component == c for component, _ in CHECKS)]


def run_check(subject: Subject, case: Case) -> Divergence | None:
    try:
        fn = CHECKS[(case.component, case.property)]
    except KeyError:
        known = ", ".join(f"{c}/{p}" for c, p in sorted(CHECKS))
        raise ValueError(f"no check {case.component}/{case.property} (known: {known})") from None
    return fn(subject, case)


def impl_call(case: Case, expected, call: Callable):
    """Runs the implementation; an exception is a divergence of its own kind, never a crash."""
    try:
        return call(), None
    except Exception as exc:  # the implementation under test may fail in any way
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return None, Divergence(case, expected, f"{type(exc).__name__}: {exc}",
                                kind=f"raised {type(exc).__name__}", first_difference={"where": where})


def _ids_divergence(subject: Subject, case: Case, expected: list[int], actual: list[int], text: str) -> Divergence:
    index = first_index(expected, actual)
    lo, hi = max(0, index - WINDOW), index + WINDOW + 1
    impl_pieces = [subject.tokenizer.id_to_token(i) if isinstance(i, int) else repr(i) for i in actual[lo:hi]]
    # Where in the text the sides part: the length of what the agreed-on prefix decodes to.
    at = len(subject.oracle.decode(expected[:index])) if index else 0
    if index == len(expected):
        kind = "ids: impl adds tokens at the end"
    elif index == len(actual):
        kind = "ids: impl drops tokens at the end"
    else:
        kind = f"ids differ at {char_kind(text, at)}"
    return Divergence(case, expected, actual, kind, {
        "index": index, "text_index": at,
        "expected_window": subject.oracle.pieces(expected[lo:hi]), "actual_window": impl_pieces,
    })


def text_divergence(case: Case, expected: str, actual: str) -> Divergence:
    index = first_index(expected, actual)
    kind = f"text differs at {char_kind(expected, index)} (impl {char_kind(actual, index)})"
    return Divergence(case, expected, actual, kind, {
        "index": index, "expected_window": expected[max(0, index - 8): index + 8],
        "actual_window": actual[max(0, index - 8): index + 8],
    })


@check("tokenizer", "encode", minimize="text")
def check_encode(subject: Subject, case: Case) -> Divergence | None:
    text, special = case.input["text"], case.input.get("add_special_tokens", False)
    expected = subject.oracle.encode(text, special)
    actual, failure = impl_call(case, expected, lambda: subject.tokenizer.encode(text, add_special_tokens=special))
    if failure or actual == expected:
        return failure
    return _ids_divergence(subject, case, expected, actual, text)


@check("tokenizer", "decode", minimize="ids")
def check_decode(subject: Subject, case: Case) -> Divergence | None:
    ids, skip = case.input["ids"], case.input.get("skip_special_tokens", False)
    expected = subject.oracle.decode(ids, skip)
    actual, failure = impl_call(case, expected, lambda: subject.tokenizer.decode(ids, skip_special_tokens=skip))
    if failure or actual == expected:
        return failure
    return text_divergence(case, expected, actual)


@check("tokenizer", "vocab", minimize="ids")
def check_vocab(subject: Subject, case: Case) -> Divergence | None:
    """id_to_token and token_to_id agree for these ids, and the vocabulary sizes agree."""
    ids = case.input["ids"]
    expected = {"vocab_size": subject.oracle.vocab_size,
                "tokens": [subject.oracle.id_to_token(i) for i in ids]}
    tok = subject.tokenizer

    def impl_view():
        tokens = [tok.id_to_token(i) for i in ids]
        back = [tok.token_to_id(t) if t is not None else None for t in tokens]
        return {"vocab_size": tok.vocab_size, "tokens": tokens}, back

    result, failure = impl_call(case, expected, impl_view)
    if failure:
        return failure
    actual, back = result
    oracle_back = [subject.oracle.tokenizer.token_to_id(t) if t is not None else None for t in expected["tokens"]]
    if actual == expected and back == oracle_back:
        return None
    if actual["vocab_size"] != expected["vocab_size"]:
        return Divergence(case, expected["vocab_size"], actual["vocab_size"], "vocab_size differs")
    index = first_index(expected["tokens"], actual["tokens"])
    if index == len(ids):
        index = first_index(oracle_back, back)
        return Divergence(case, oracle_back[index], back[index], "token_to_id differs", {"id": ids[index]})
    return Divergence(case, expected["tokens"][index], actual["tokens"][index], "id_to_token differs",
                      {"id": ids[index]})


# The streaming components register their checks in a module of their own.
from . import stream_checks  # noqa: E402,F401
