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
import re
from dataclasses import dataclass

from tokenizers.pre_tokenizers import ByteLevel

from ..divergence import Case
from .registry import Subject, oracle_call

REPLACEMENT_CHARACTER = "\ufffd"
BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
WITNESS_SAMPLE = 16  # ids of each kind appended to show that a text can still change
BYTE_LEVEL = ByteLevel(add_prefix_space=False, use_regex=False)


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



@dataclass
class VocabularySurvey:
    """Ids grouped by what they decode to alone, found once per family from the oracle."""

    vocab: dict[str, int]
    ids: list[int]
    special_ids: list[int]
    broken_ids: list[int]   # decode alone to U+FFFD: stray bytes of a character
    byte_ids: list[int]     # byte-fallback tokens <0xNN>, valid or not alone
    witnesses: list[int]    # a sample of broken ids and plain letters

    @classmethod
    def of(cls, subject: Subject) -> "VocabularySurvey":
        oracle = subject.oracle
        vocab = oracle.vocab()
        ids = sorted(vocab.values())
        alone = dict(zip(ids, oracle.decode_batch([[i] for i in ids])))
        broken = [i for i in ids if alone[i] == REPLACEMENT_CHARACTER]
        letters = [i for i in ids if len(alone[i]) == 1 and alone[i].isascii() and alone[i].isalpha()
                   and i not in oracle.special_ids]
        return cls(vocab, ids, sorted(oracle.special_ids), broken,
                   byte_ids=sorted(i for token, i in vocab.items() if BYTE_TOKEN.fullmatch(token)),
                   witnesses=_spread(broken, WITNESS_SAMPLE) + _spread(letters, WITNESS_SAMPLE))

    def spelled(self, char: str) -> list[int]:
        """Ids spelling ``char`` one UTF-8 byte per token (byte fallback or byte level); [] if none can."""
        data = char.encode("utf-8")
        for tokens in ([f"<0x{byte:02X}>" for byte in data], BYTE_LEVEL.pre_tokenize_str(char)[0][0]):
            if len(tokens) == len(data) and all(token in self.vocab for token in tokens):
                return [self.vocab[token] for token in tokens]
        return []


def _spread(items: list[int], count: int) -> list[int]:
    return items[:: max(1, len(items) // count)][:count]


def vocabulary_survey(subject: Subject) -> VocabularySurvey:
    return subject.cached("vocabulary_survey", lambda: VocabularySurvey.of(subject))

