"""Oracle disagreements between `tokenizers` and a second oracle: where they part, in a word.

`tokenizers` (oracle A, the one impl is checked against) and a second oracle (oracle B: the
`sentencepiece` library wherever a .model exists, `tiktoken` for Tekken and byte-level
vocabularies) answer the same encode (without special tokens) and decode (keeping them) cases of
the tokenizer component. Where impl agrees with A and B differs, the check records an *oracle
disagreement* (textbound/checks/tokenizer.py): both outputs and a classification, never counted as
an impl failure, listed apart in every report.

    >>> comparison = SecondOracleComparison(TokenizersOracle.from_dir(path), sentencepiece)  # doctest: +SKIP
    >>> comparison.encode("[INST] hi")                                                      # doctest: +SKIP
    ([1501, 17057, 29561, 12782], 'control tokens', {'index': 0, 'span': [0, 6], ...})

Classifications, the first that applies: ``control tokens`` (the text holds an added token's
content, or the ids a special token), ``runs of spaces``, ``leading space``, ``trailing space``,
``other whitespace``, ``byte fallback``, ``invalid UTF-8`` (a decode with U+FFFD),
``non-ASCII <category>`` (the first non-ASCII character where they part), ``other``; and
``oracle B raised`` when the second oracle failed on the input.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from . import MissingExtra
from .tokenizers_oracle import TokenizersOracle

# The libraries of the second oracles (sentencepiece's and tiktoken's), which a run without one of
# them notes once: the oracle disagreements that one would show are not looked for.
SECOND_ORACLE_LIBRARIES = ("sentencepiece", "tiktoken")
WINDOW = 8  # characters or pieces of context shown around the first difference


def second_oracles(folder: str | Path) -> list:
    """The second oracles that can read the family in ``folder`` (none for most families). One whose
    library is not installed is left out: a run says so once (SECOND_ORACLE_LIBRARIES), and impl is
    still checked against `tokenizers`."""
    from .sentencepiece_oracle import SentencePieceOracle
    from .tiktoken_oracle import TiktokenOracle

    found = []
    for kind in (SentencePieceOracle, TiktokenOracle):
        try:
            oracle = kind.for_family(folder)
        except MissingExtra:
            continue
        if oracle is not None:
            found.append(oracle)
    return found


class SecondOracleComparison:
    """One second oracle beside `tokenizers` on a family: None where they agree, else oracle B's
    output (or its error), the classification and the first difference."""

    def __init__(self, reference: TokenizersOracle, oracle):
        self.reference, self.oracle, self.classifier = reference, oracle, Classifier(reference)
        self.name = oracle.version.split()[0]  # "sentencepiece", "tiktoken"

    def encode(self, text: str, ids_a: list[int]) -> tuple[Any, str, dict] | None:
        ids_b, error = _outcome(self.oracle.encode, text)
        if not error and ids_b == ids_a:
            return None
        encoding = self.reference.tokenizer.encode(text, add_special_tokens=False)  # offsets, to classify
        return (error or ids_b, *self.classifier.encode(text, encoding, ids_b, error))

    def decode(self, ids: list[int], text_a: str) -> tuple[Any, str, dict] | None:
        text_b, error = _outcome(self.oracle.decode, ids)
        if not error and text_b == text_a:
            return None
        return (error or text_b, *self.classifier.decode(ids, text_a, text_b, error))


class Classifier:
    """Where two oracles' outputs part, in a word (see the module docstring for the list)."""

    def __init__(self, reference: TokenizersOracle):
        self.reference = reference
        contents = [token.content for token in reference.tokenizer.get_added_tokens_decoder().values()]
        self.added = re.compile("|".join(map(re.escape, sorted(contents, key=len, reverse=True)))) if contents else None

    def encode(self, text: str, encoding, theirs: list[int] | None, error: str | None) -> tuple[str, dict]:
        ours = encoding.ids
        if error:
            return "oracle B raised", {}
        start = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        common_tail = next((k for k, (a, b) in enumerate(zip(reversed(ours[start:]), reversed(theirs[start:])))
                            if a != b), min(len(ours), len(theirs)) - start)
        end_a, end_b = len(ours) - common_tail, len(theirs) - common_tail
        offsets = encoding.offsets
        span_start = offsets[start][0] if start < len(offsets) else len(text)
        span_end = offsets[end_a - 1][1] if start < end_a <= len(offsets) else span_start
        difference = {"index": start, "span": [span_start, span_end],
                      "a": self.reference.pieces(ours[start:end_a][:WINDOW]),
                      "b": self.reference.pieces(theirs[start:end_b][:WINDOW]),
                      "text": text[max(0, span_start - WINDOW):span_end + WINDOW]}
        pieces = difference["a"] + difference["b"]
        if self.added and self.added.search(text):
            return "control tokens", difference
        return _where(text, span_start, max(span_end, span_start + 1), pieces), difference

    def decode(self, ids: list[int], ours: str, theirs: str | None, error: str | None) -> tuple[str, dict]:
        if error:
            return "oracle B raised", {}
        index = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        difference = {"index": index, "a": ours[max(0, index - WINDOW):index + WINDOW],
                      "b": theirs[max(0, index - WINDOW):index + WINDOW]}
        if set(ids) & self.reference.special_ids:
            return "control tokens", difference
        if "\ufffd" in ours + theirs:
            return "invalid UTF-8", difference
        longer = ours if len(ours) >= len(theirs) else theirs
        return _where(longer, index, index + 1, self.reference.pieces(ids[:WINDOW])), difference


def _where(text: str, start: int, end: int, pieces: list[str]) -> str:
    """The kind of text around ``text[start:end]``, where two outputs part."""
    window = text[max(0, start - 1):end + 1]
    if "  " in window:
        return "runs of spaces"
    if start == 0 and text[:1] == " ":
        return "leading space"
    if end >= len(text) and text.endswith(" "):
        return "trailing space"
    if any(char.isspace() and char != " " for char in window):
        return "other whitespace"
    if any(piece.startswith("<0x") for piece in pieces):
        return "byte fallback"
    non_ascii = next((char for char in text[start:end] or window if ord(char) > 0x7F), None)
    return f"non-ASCII {unicodedata.category(non_ascii)}" if non_ascii else "other"


def _outcome(function, argument) -> tuple[Any, str | None]:
    try:
        return function(argument), None
    except Exception as exc:  # a second oracle's failure is itself a disagreement, recorded
        return None, f"raised {type(exc).__name__}: {exc}"
