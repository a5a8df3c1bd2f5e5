"""Checks of the ``tokenizer`` component: encode, decode and the vocabulary, against `tokenizers`.

Where a family has a second oracle (sentencepiece, tiktoken: oracles.disagreements), the encode
(without special tokens) and decode (keeping them) cases impl gets right are put to it too, and an
answer other than `tokenizers`' is an oracle disagreement, reported apart from impl's divergences.
"""
from __future__ import annotations

from oracles.disagreements import SecondOracleComparison, second_oracles

from ..counterfactuals import AddedTokenReadings
from ..divergence import ORACLE_DISAGREEMENT, Case, Divergence, first_index
from ..shape import Vocabulary
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


def read_otherwise(readings: AddedTokenReadings, vocabulary: Vocabulary, case: Case, kind: str, actual) -> str:
    """``kind`` named by the added-token flag the implementation reads otherwise, where an encode's
    text or a decode's ids hold an added token and one flipped flag makes the oracle give impl's
    ``actual``: one bug, one kind, whichever way the flag shows (a space lost after the token, the
    token not split off; a bug outside the flags that happens to give the same answer is named so too):
    "ids: drops ' ' after an added token" -> "ids: reads every added token's normalized as true"."""
    given = case.input
    if case.property == "encode":
        involved = any(s in given.get("text", "") for s in vocabulary.added_tokens.strings)
        def answer(tokenizer):
            return tokenizer.encode(given["text"], add_special_tokens=given.get("add_special_tokens", False)).ids
    else:
        involved = bool(set(given.get("ids", [])) & vocabulary.added_ids)
        def answer(tokenizer):
            return tokenizer.decode(given["ids"], skip_special_tokens=given.get("skip_special_tokens", False))
    reading = involved and readings.reading(lambda tokenizer: answer(tokenizer) == actual)
    return f"{kind.split(':', 1)[0]}: {reading}" if reading else kind


def _read_otherwise(subject: Subject, found: Divergence) -> Divergence:
    readings = subject.cached("added-token readings", lambda: AddedTokenReadings.of(subject.path))
    found.kind = read_otherwise(readings, family_vocabulary(subject), found.case, found.kind, found.actual)
    return found


@check("tokenizer", "encode", minimize="text")
def check_encode(subject: Subject, case: Case) -> Divergence | None:
    text, special = case.input["text"], case.input.get("add_special_tokens", False)
    expected = subject.oracle.encode(text, special)
    return _compared(subject, case, "encode", text, expected,
                     lambda: subject.tokenizer.encode(text, add_special_tokens=special),
                     lambda actual: _read_otherwise(subject, ids_divergence(subject, case, expected, actual, text)),
                     not special)


@check("tokenizer", "decode", minimize="ids")
def check_decode(subject: Subject, case: Case) -> Divergence | None:
    ids, skip = case.input["ids"], case.input.get("skip_special_tokens", False)
    expected = subject.oracle.decode(ids, skip)
    added = family_vocabulary(subject).added_tokens
    return _compared(subject, case, "decode", ids, expected,
                     lambda: subject.tokenizer.decode(ids, skip_special_tokens=skip),
                     lambda actual: _read_otherwise(subject, text_divergence(case, expected, actual, added)), not skip)


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
