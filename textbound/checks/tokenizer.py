"""Checks of the ``tokenizer`` component: encode, decode and the vocabulary, against `tokenizers`.

Where a family has a second oracle (sentencepiece, tiktoken: oracles.disagreements), the encode
(without special tokens) and decode (keeping them) cases impl gets right are put to it too, and an
answer other than `tokenizers`' is an oracle disagreement, reported apart from impl's divergences.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


# Texts a pipeline reading is tried on before it names a divergence: spaces, case, accents, digits,
# punctuation, scripts and lines, each of which some stage or option changes.
PROBE_TEXTS = ("Hello, World! It's 2024-05-06.", "  two  spaces\tand\nlines\n", "caf\u00e9 na\u0308ive \u00c9COLE",
               "\u65e5\u672c\u8a9e \uff83\uff77\uff7d\uff84 \ufb01", "don't stop-words; (x) [y] {z}", " leading and trailing ")


@dataclass
class FamilyReadings:
    """A family's counterfactual oracles, as read_otherwise asks them: each added-token flag
    flipped, then each pipeline change (a stage skipped, an option read otherwise, on every node of
    a type). A pipeline change names a divergence only where the engine also answers as it on every
    probe text it changes (``agreement`` is None otherwise: a change that matches one input by chance,
    a truncation the skipped pre-tokenizer happens to give, does not), and of several the one the
    engine answers like on most probes does (skipping a whole normalizer over reading its lowercase
    as false, for an engine without a normalizer)."""

    added_tokens: AddedTokenReadings
    pipeline: AddedTokenReadings
    agreements: dict = field(default_factory=dict)  # (variant tokenizer id, property) -> agreement

    @classmethod
    def of(cls, folder) -> "FamilyReadings":
        return cls(AddedTokenReadings.of(folder), AddedTokenReadings.of(folder, pipeline=True))

    def agreement(self, subject: Subject, variant, prop: str) -> int | None:
        """On how many probe texts (encoded, or their oracle ids decoded) impl answers as ``variant``;
        None where it answers otherwise on one that ``variant`` answers otherwise than the oracle."""
        key = (id(variant), prop)
        if key not in self.agreements:
            answers = [_probe_answers(subject, variant, prop, text) for text in PROBE_TEXTS]
            contradicted = any(theirs not in (oracle, mine) for oracle, theirs, mine in answers)
            self.agreements[key] = None if contradicted else sum(theirs == mine for _, theirs, mine in answers)
        return self.agreements[key]


def _probe_answers(subject: Subject, variant, prop: str, text: str) -> tuple:
    """(the oracle's, the variant's, impl's) answer on one probe text; all alike where one side raises."""
    try:
        if prop == "encode":
            return (subject.oracle.encode(text), variant.encode(text, add_special_tokens=False).ids,
                    subject.tokenizer.encode(text, add_special_tokens=False))
        ids = subject.oracle.encode(text)
        return (subject.oracle.decode(ids), variant.decode(ids, skip_special_tokens=False),
                subject.tokenizer.decode(ids, skip_special_tokens=False))
    except Exception:  # noqa: BLE001 - a probe a side cannot answer tells nothing about the reading
        return (None, None, None)


def read_otherwise(readings: FamilyReadings, vocabulary: Vocabulary, case: Case, kind: str, actual,
                   agreement=None) -> str:
    """``kind`` named by the flag or option the implementation reads otherwise, where one flipped
    makes the oracle give impl's ``actual``: an added-token flag where an encode's text or a
    decode's ids hold an added token, else (given ``agreement(variant)``: FamilyReadings.agreement
    for the engine) a pipeline change: a stage skipped, a Split's behavior, a prepend
    scheme read otherwise. One bug, one kind, whichever way it shows (a space lost after the token,
    the token not split off; a bug outside these that happens to give the same answer is named so
    too): "ids: drops ' ' after an added token" -> "ids: reads every added token's normalized as
    true", "ids: inserts ' ' at the start" -> "ids: skips the normalizer"."""
    given = case.input
    if case.property == "encode":
        involved = any(s in given.get("text", "") for s in vocabulary.added_tokens.strings)
        def answer(tokenizer):
            return tokenizer.encode(given["text"], add_special_tokens=given.get("add_special_tokens", False)).ids
    else:
        involved = bool(set(given.get("ids", [])) & vocabulary.added_ids)
        def answer(tokenizer):
            return tokenizer.decode(given["ids"], skip_special_tokens=given.get("skip_special_tokens", False))
    def reproduces(tokenizer) -> bool:
        return answer(tokenizer) == actual
    reading = involved and readings.added_tokens.reading(reproduces)
    if not reading and agreement is not None:
        scored = [(score, -order, description) for order, (description, variant) in
                  enumerate(readings.pipeline.matching(reproduces)) if (score := agreement(variant)) is not None]
        reading = max(scored)[2] if scored else None
    return f"{kind.split(':', 1)[0]}: {reading}" if reading else kind


def _read_otherwise(subject: Subject, found: Divergence) -> Divergence:
    readings = subject.cached("counterfactual readings", lambda: FamilyReadings.of(subject.path))
    found.kind = read_otherwise(readings, family_vocabulary(subject), found.case, found.kind, found.actual,
                                lambda variant: readings.agreement(subject, variant, found.case.property))
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
