"""Checks of the ``tokenizer`` component: encode, decode and the vocabulary, against `tokenizers`.

Where a family has a second oracle (sentencepiece, tiktoken: oracles.disagreements), the encode
(without special tokens) and decode (keeping them) cases impl gets right are put to it too, and an
answer other than `tokenizers`' is an oracle disagreement, reported apart from impl's divergences.
A second oracle whose library is not installed is not asked (a run notes it once).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from textbound.oracles.disagreements import SECOND_ORACLE_LIBRARIES, SecondOracleComparison, second_oracles

from ..naming.counterfactuals import AddedTokenReadings, TextReading, added_tokens_read_as_text, text_readings
from ..naming.divergence import FILE_READING, ORACLE_DISAGREEMENT, Case, Divergence, first_index
from ..naming.shape import Vocabulary
from .registry import EVERY_SOURCE, Subject, check, family_vocabulary, ids_divergence, impl_call, text_divergence
from .tokenizer_cases import CHARACTER_CLASSES, added_token_neighbourhoods


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

MOST_PROBED_TOKENS = 3  # the involved added tokens a flag reading is tried on in every neighbourhood
NOT_SPLIT_OFF = "does not split off an added token"
# How a neighbour of an added token is named, on the side before it and after it.
NEIGHBOURS = {"letter": "a letter", "digit": "a digit", "space": "' '", "newline": "'\\n'",
              "punctuation": "punctuation", "CJK": "CJK", "emoji": "an emoji"}


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
    agreements: dict = field(default_factory=dict)  # (variant tokenizer id, property, texts) or a text reading -> agreement
    unsplit: dict = field(default_factory=dict)  # added token -> where the engine reads it as text

    @classmethod
    def of(cls, folder) -> "FamilyReadings":
        """Every reading of ``folder``'s tokenizer.json loaded, once per worker: as a per-family fact
        (Subject.cached) it is the family's setup, not the time of the case that first asks."""
        return cls(AddedTokenReadings.of(folder).loaded_all(), AddedTokenReadings.of(folder, pipeline=True).loaded_all())

    def agreement(self, subject: Subject, variant, prop: str, texts: tuple[str, ...] = PROBE_TEXTS) -> int | None:
        """On how many probe texts (encoded, or their oracle ids decoded) impl answers as ``variant``;
        None where it answers otherwise on one that ``variant`` answers otherwise than the oracle."""
        key = (id(variant), prop, texts)
        if key not in self.agreements:
            answers = [_probe_answers(subject, variant, prop, text) for text in texts]
            contradicted = any(theirs not in (oracle, mine) for oracle, theirs, mine in answers)
            self.agreements[key] = None if contradicted else sum(theirs == mine for _, theirs, mine in answers)
        return self.agreements[key]

    def unsplit_where(self, subject: Subject, token: str) -> str | None:
        """Where the engine reads ``token`` as text, told by the one neighbour every such
        neighbourhood of it shares (before it or after it): "before punctuation", "after an added
        token", "at the start"; None where it never does, or no one neighbour is shared. Characters
        are asked first: an added token is a neighbour whose first character ("[" of "[CLS]") may
        be what the engine looks at."""
        if token not in self.unsplit:
            around = {"": ("at the start", "at the end"), token: ("after an added token", "before an added token"),
                      **{char: (f"after {NEIGHBOURS[name]}", f"before {NEIGHBOURS[name]}")
                         for name, char in CHARACTER_CLASSES.items()}}
            found = set()
            for before in around:
                for after in around:
                    text = before + token + after
                    try:
                        ids = subject.tokenizer.encode(text, add_special_tokens=False)
                    except Exception:  # noqa: BLE001 - a text the engine cannot encode says nothing here
                        continue
                    spans = added_tokens_read_as_text(subject.oracle.tokenizer, text, ids) or ()
                    if any(start <= len(before) < end for start, end in spans):
                        found.add((before, after))
            characters = {(b, a) for b, a in found if token not in (b, a)}
            shared = _shared_neighbour(characters) or _shared_neighbour(found)
            self.unsplit[token] = shared and around[shared[1]][shared[0] == "after"]
        return self.unsplit[token]


def _shared_neighbour(pairs: set[tuple[str, str]]) -> tuple[str, str] | None:
    """("before" or "after", the neighbour) that every (before, after) pair shares on one side
    while the other side varies: ("after", ".") for {("a", "."), ("7", ".")}; None where none is."""
    befores, afters = {b for b, _ in pairs}, {a for _, a in pairs}
    if len(afters) == 1 < len(befores):
        return "after", afters.pop()
    if len(befores) == 1 < len(afters):
        return "before", befores.pop()
    return None


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


@dataclass
class EngineAnswers:
    """What read_otherwise asks of the engine under test, beyond the one case: how it answers the
    probe texts (``agreement``) and where it reads an added token as text (``unsplit_where``)."""

    subject: Subject
    readings: FamilyReadings
    prop: str

    def agreement(self, variant, texts: tuple[str, ...] = PROBE_TEXTS) -> int | None:
        return self.readings.agreement(self.subject, variant, self.prop, texts)

    def unsplit_where(self, token: str) -> str | None:
        return self.readings.unsplit_where(self.subject, token)

    def reads_text_so(self, reading: TextReading) -> bool:
        """Whether the engine answers as ``reading`` on its probes wherever that is not the oracle's
        answer (a bug dropping a text's last token is not "drops Unicode line breaks" on "0\\x1e")."""
        key = ("text reading", reading)
        if key not in self.readings.agreements:
            oracle = self.subject.oracle

            def contradicts(probe: str) -> bool:
                theirs = oracle.encode(reading.rewrite(probe))
                return theirs != oracle.encode(probe) and self.subject.tokenizer.encode(probe, add_special_tokens=False) != theirs
            try:
                self.readings.agreements[key] = not any(map(contradicts, reading.probes()))
            except Exception:  # noqa: BLE001 - an engine that cannot encode a probe does not read it so
                self.readings.agreements[key] = False
        return self.readings.agreements[key]


def read_otherwise(readings: FamilyReadings, vocabulary: Vocabulary, case: Case, kind: str, actual,
                   engine: EngineAnswers | None = None) -> str:
    """``kind`` named by how the implementation reads the family's files or the input otherwise,
    where that makes the oracle give impl's ``actual``: an added-token flag where an encode's text
    or a decode's ids hold an added token, else an added token the oracle splits off read as text,
    else (given the ``engine``, whose answers on probe texts must agree) a pipeline change: a stage
    skipped, a Split's behavior, a prepend scheme read otherwise, else a class of the text's spaces,
    control or format characters read otherwise (``text_readings``). Given the engine, a flag names a
    divergence only where impl answers as it on the involved tokens in every neighbourhood too, and
    a token read as text is told by the neighbour where the engine does so. One bug, one kind,
    whichever way it shows (a space lost after the token, the token not split off; a bug outside
    these that happens to give the same answer is named so too), a flag or option led by
    FILE_READING whichever property shows it: "ids: drops ' ' after an added token" ->
    "tokenizer.json: reads every added token's normalized as true", "ids: inserts ' ' at the start"
    -> "tokenizer.json: skips the normalizer", "ids: drops tokens at the end" -> "ids: reads Unicode
    spaces as ' '", "ids: inserts ' ' at the end" -> "ids: does not split off an added token after an
    added token"."""
    given = case.input
    encoding = case.property == "encode"
    special = given.get("add_special_tokens", False) if encoding else given.get("skip_special_tokens", False)
    text = given.get("text", "")
    if encoding:
        involved = sorted((s for s in vocabulary.added_tokens.strings if s in text), key=text.find)
        def answer(tokenizer, encoded=text):
            return tokenizer.encode(encoded, add_special_tokens=special).ids
    else:
        ids = set(given.get("ids", []))
        involved = [vocabulary.piece(i) for i in sorted(ids & vocabulary.added_ids)]
        def answer(tokenizer):
            return tokenizer.decode(given["ids"], skip_special_tokens=special)
    def reproduces(tokenizer) -> bool:
        return answer(tokenizer) == actual
    reading = None
    if involved:
        probes = tuple(added_token_neighbourhoods(involved[:MOST_PROBED_TOKENS]))
        reading = next((description for description, variant in readings.added_tokens.matching(reproduces)
                        if engine is None or engine.agreement(variant, probes) is not None), None)
    file_read = reading is not None  # a flag or pipeline option of tokenizer.json: FILE_READING leads its kind
    if not reading and encoding and involved and not special:
        read_as_text = added_tokens_read_as_text(vocabulary.tokenizer, text, actual)
        if read_as_text is not None:
            reading = NOT_SPLIT_OFF
            # the tokens read as text are the ones to tell where the engine does so
            involved = [t for t in involved if any(t in text[s:e] for s, e in read_as_text)] + involved
    if not reading and engine is not None:
        scored = [(score, -order, description) for order, (description, variant) in
                  enumerate(readings.pipeline.matching(reproduces)) if (score := engine.agreement(variant)) is not None]
        reading = max(scored)[2] if scored else None
        file_read = reading is not None
    if not reading and encoding:
        reading = next((found.description for found in text_readings(text)
                        if answer(vocabulary.tokenizer, found.rewrite(text)) == actual
                        and (engine is None or engine.reads_text_so(found))), None)
    if reading:
        kind = f"{FILE_READING if file_read else kind.split(':', 1)[0]}: {reading}"
    if kind.endswith(NOT_SPLIT_OFF) and engine is not None:
        where = next(filter(None, map(engine.unsplit_where, list(dict.fromkeys(involved))[:MOST_PROBED_TOKENS])), None)
        kind = f"{kind} {where}" if where else kind
    return kind


def _read_otherwise(subject: Subject, found: Divergence) -> Divergence:
    readings = subject.cached("counterfactual readings", lambda: FamilyReadings.of(subject.path))
    found.kind = read_otherwise(readings, family_vocabulary(subject), found.case, found.kind, found.actual,
                                EngineAnswers(subject, readings, found.case.property))
    return found


@check("tokenizer", "encode", minimize="text", sources=EVERY_SOURCE, consults=SECOND_ORACLE_LIBRARIES)
def check_encode(subject: Subject, case: Case) -> Divergence | None:
    text, special = case.input["text"], case.input.get("add_special_tokens", False)
    expected = subject.oracle.encode(text, special)
    return _compared(subject, case, "encode", text, expected,
                     lambda: subject.tokenizer.encode(text, add_special_tokens=special),
                     lambda actual: _read_otherwise(subject, ids_divergence(subject, case, expected, actual, text)),
                     not special)


@check("tokenizer", "decode", minimize="ids", sources=EVERY_SOURCE, consults=SECOND_ORACLE_LIBRARIES)
def check_decode(subject: Subject, case: Case) -> Divergence | None:
    ids, skip = case.input["ids"], case.input.get("skip_special_tokens", False)
    expected = subject.oracle.decode(ids, skip)
    added = family_vocabulary(subject).added_tokens
    return _compared(subject, case, "decode", ids, expected,
                     lambda: subject.tokenizer.decode(ids, skip_special_tokens=skip),
                     lambda actual: _read_otherwise(subject, text_divergence(case, expected, actual, added)), not skip)


@check("tokenizer", "vocab", minimize="ids", sources=EVERY_SOURCE)
def check_vocab(subject: Subject, case: Case) -> Divergence | None:
    """id_to_token and token_to_id agree for these ids, and the vocabulary sizes agree."""
    ids = case.input["ids"]
    expected = {"vocab_size": subject.oracle.vocab_size,
                "tokens": [subject.oracle.id_to_token(i) for i in ids]}

    def impl_view():
        tok = subject.tokenizer  # loaded inside: a file impl cannot load is its divergence
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
    kind = "id_to_token differs"
    if ids[index] in family_vocabulary(subject).added_ids:  # named by the flag whose reading gives impl's pieces
        readings = subject.cached("counterfactual readings", lambda: FamilyReadings.of(subject.path))
        reading = readings.added_tokens.reading(lambda tokenizer: [tokenizer.id_to_token(i) for i in ids] == actual["tokens"])
        kind = f"{FILE_READING}: {reading}" if reading else kind
    return Divergence(case, expected["tokens"][index], actual["tokens"][index], kind, {"id": ids[index]})
