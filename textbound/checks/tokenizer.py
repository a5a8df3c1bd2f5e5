"""Checks of the ``tokenizer`` component: encode, decode and the vocabulary, against `tokenizers`.

Where a family has a second oracle (sentencepiece, tiktoken: oracles.disagreements), the encode
(without special tokens) and decode (keeping them) cases impl gets right are put to it too, and an
answer other than `tokenizers`' is an oracle disagreement, reported apart from impl's divergences.
"""
from __future__ import annotations

import json

from oracles.disagreements import SecondOracleComparison, second_oracles

from ..counterfactuals import AddedTokenReadings
from ..divergence import ORACLE_DISAGREEMENT, Case, Divergence, first_index
from .registry import Subject, check, family_vocabulary, ids_divergence, impl_call, text_divergence


def second_oracle_disagreement(subject: Subject, case: Case, operation: str, given, output_a) -> Divergence | None:
    """The first second oracle of the family answering ``operation(given)`` otherwise than
    `tokenizers` (``output_a``), as an oracle disagreement; None when all agree."""
    comparisons = subject.cached("second oracles", lambda: [SecondOracleComparison(subject.oracle, oracle)
                                                            for oracle in second_oracles(subject.path)])
    for comparison in comparisons:
        parted = getattr(comparison, operation)(given, output_a)
        if parted is not None:
            output_b, classification, difference = parted
            return Divergence(case, output_a, output_b, f"{ORACLE_DISAGREEMENT} {comparison.name}: {classification}",
                              {**difference, "oracle_b": comparison.oracle.version})
    return None


def _compared(subject: Subject, case: Case, operation: str, given, expected, call, differs,
              second_opinion: bool) -> Divergence | None:
    """impl's answer to ``operation(given)`` against the oracle's ``expected``; where impl is right,
    the family's second oracles are asked too when ``second_opinion``."""
    actual, failure = impl_call(case, expected, call)
    if failure:
        return failure
    if actual != expected:
        return differs(actual)
    return second_oracle_disagreement(subject, case, operation, given, expected) if second_opinion else None


def _read_otherwise(subject: Subject, found: Divergence, involved: bool, answer) -> Divergence:
    """``found`` named by the added-token flag the implementation reads otherwise, where the case
    involves an added token and one flipped flag makes the oracle give impl's answer: one bug, one
    kind, whichever way the flag shows (a space lost after the token, the token not split off)."""
    if not involved:
        return found
    readings = subject.cached("added-token readings", lambda: AddedTokenReadings(
        json.loads((subject.path / "tokenizer.json").read_text(encoding="utf-8"))))
    reading = readings.reading(lambda tokenizer: _plain(answer(tokenizer)) == _plain(found.actual))
    if reading:
        found.kind = f"{found.kind.split(':', 1)[0]}: {reading}"
    return found


def _plain(value):
    return value if isinstance(value, str) else list(value)


@check("tokenizer", "encode", minimize="text")
def check_encode(subject: Subject, case: Case) -> Divergence | None:
    text, special = case.input["text"], case.input.get("add_special_tokens", False)
    expected = subject.oracle.encode(text, special)
    return _compared(subject, case, "encode", text, expected,
                     lambda: subject.tokenizer.encode(text, add_special_tokens=special),
                     lambda actual: _read_otherwise(
                         subject, ids_divergence(subject, case, expected, actual, text),
                         any(s in text for s in family_vocabulary(subject).added_tokens.strings),
                         lambda t: t.encode(text, add_special_tokens=special).ids), not special)


@check("tokenizer", "decode", minimize="ids")
def check_decode(subject: Subject, case: Case) -> Divergence | None:
    ids, skip = case.input["ids"], case.input.get("skip_special_tokens", False)
    expected = subject.oracle.decode(ids, skip)
    added = family_vocabulary(subject).added_tokens
    return _compared(subject, case, "decode", ids, expected,
                     lambda: subject.tokenizer.decode(ids, skip_special_tokens=skip),
                     lambda actual: _read_otherwise(
                         subject, text_divergence(case, expected, actual, added),
                         bool(set(ids) & family_vocabulary(subject).added_ids),
                         lambda t: t.decode(ids, skip_special_tokens=skip)), not skip)


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
