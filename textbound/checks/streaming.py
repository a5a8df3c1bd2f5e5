"""What the streaming components (``detokenizer``, ``stops``) share: cutting a case's ids into the
deltas of successive calls, streaming them through impl and through DecodeStream, and a survey of
the family's vocabulary.

A streamed case cuts its ids (or text) into the deltas of successive calls at ``splits``, a list
of cut points; cut points past the end count as the end, so delta debugging can shrink the ids
and keep the splits:

    chunks([7, 8, 9], [1, 1, 5]) == [[7], [], [8, 9], []]
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from textbound.properties.vocabulary import VocabularySurvey

from ..naming.divergence import REPLACEMENT_CHARACTER, Case
from .registry import Subject, oracle_call


def chunks(items: list, splits: list[int]) -> list[list]:
    """``items`` cut at ``splits`` (sorted, clipped to the length; repeats give empty chunks)."""
    cuts = sorted(min(max(cut, 0), len(items)) for cut in splits)
    return [items[start:end] for start, end in itertools.pairwise([0, *cuts, len(items)])]


def random_splits(rng: random.Random, length: int, fewest: int = 0, most: int | None = None) -> list[int]:
    """Between ``fewest`` and ``most`` (default ``length + 1``) cut points into ``length`` items, sorted,
    repeats allowed (empty deltas). A stream of a few dozen ids can take a cut between any two; a tool
    call's text of hundreds of characters takes at most a quarter as many, since each delta costs a
    scan, and at least one so that it is streamed at all:

        random_splits(random.Random(0), 4) == [0, 2, 3]
    """
    count = rng.randint(fewest, length + 1 if most is None else most)
    return sorted(rng.randint(0, length) for _ in range(count))




@dataclass
class StreamInput:
    ids: list[int]
    chunks: list[list[int]]
    skip_special_tokens: bool
    prompt_ids: list[int]

    @classmethod
    def of(cls, case: Case) -> "StreamInput":
        ids = case.input["ids"]
        return cls(ids, chunks(ids, case.input.get("splits", [])), case.input.get("skip_special_tokens", True),
                   case.input.get("prompt_ids", []))

    def ids_through(self, step: int) -> list[int]:
        """The prompt and the ids of the first ``step + 1`` chunks."""
        return self.prompt_ids + [i for chunk in self.chunks[:step + 1] for i in chunk]


@dataclass
class Streamed:
    """What impl's detokenizer showed: the prompt's text, then the whole text after each add."""

    prompt_text: str
    shown: list[str]
    final: str
    text: str


def stream_impl(subject: Subject, given: StreamInput) -> Streamed:
    detokenizer = subject.impl.IncrementalDetokenizer(
        subject.tokenizer, skip_special_tokens=given.skip_special_tokens, prompt_ids=given.prompt_ids)
    shown, emitted = [], detokenizer.prompt_text
    for chunk in given.chunks:
        emitted += detokenizer.add(chunk)
        shown.append(emitted)
    emitted += detokenizer.flush()
    return Streamed(detokenizer.prompt_text, shown, emitted, detokenizer.text)


def decode_stream_shown(subject: Subject, given: StreamInput) -> list[str]:
    """The whole text DecodeStream has shown after each chunk, as far as it stays a valid reference."""
    skip = given.skip_special_tokens
    prompt_text, error = oracle_call(lambda: subject.oracle.decode(given.prompt_ids, skip))
    if error:
        return []
    emitted = "" if prompt_text.endswith(REPLACEMENT_CHARACTER) else prompt_text
    whole = subject.oracle.decode(given.prompt_ids + given.ids, skip)
    pieces = subject.oracle.decode_stream(given.prompt_ids, given.chunks, skip)
    shown = []
    for _ in given.chunks:
        piece, error = oracle_call(lambda: next(pieces))
        if error or not whole.startswith(emitted + (piece or "")):
            break
        emitted += piece or ""
        shown.append(emitted)
    return shown


PIECES_ALONE = "decodes each piece without the text before it"


def stream_reading(subject: Subject, given: StreamInput, streamed: Streamed) -> str | None:
    """How a stream's whole text was decoded, where it is the oracle's decode of the case's ids read
    otherwise: without the prompt as context (a stream that showed nothing of its prompt), with
    skip_special_tokens the other way, or each id (or each delta) without the text before it. A streaming bug is named
    so whatever characters the case drew or where the stream was cut; None when no reading gives
    its text (``streamed.final``):
    ``stream_reading(subject, StreamInput([5], [[5]], True, [7]), streamed_of(decode([5]))) == "decodes the ids without the prompt"``."""
    skip, ids, final = given.skip_special_tokens, given.prompt_ids + given.ids, streamed.final
    decode = subject.oracle.decode
    if oracle_call(lambda: decode(ids, skip))[0] in (None, final):
        return None  # right in the end: what it showed on the way is told by its shape
    readings = (
        ("decodes the ids without the prompt", lambda: given.prompt_ids and not streamed.prompt_text and decode(given.ids, skip)),
        (f"decodes with skip_special_tokens {not skip}", lambda: decode(ids, not skip)),
        # each id or each delta decoded without the text before it: one bug, context lost
        (PIECES_ALONE, lambda: "".join(decode([i], skip) for i in ids)),
        (PIECES_ALONE, lambda: decode(given.prompt_ids, skip) + "".join(decode(c, skip) for c in given.chunks)),
    )
    return next((name for name, text in readings if oracle_call(text)[0] == final), None)


def vocabulary_survey(subject: Subject) -> VocabularySurvey:
    """The family's vocabulary survey, made once per subject."""
    return subject.cached("vocabulary_survey", lambda: VocabularySurvey(subject.oracle))

