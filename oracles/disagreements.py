"""Oracle disagreements: where two references for the same family answer differently.

`tokenizers` (oracle A, the one impl is checked against) and a second oracle (oracle B: the
`sentencepiece` library wherever a .model exists, `tiktoken` for Tekken and byte-level
vocabularies) are given the same inputs: corpus snippets and the sweeps (textbound/cases.py,
properties/sweeps.py) to encode without special tokens, and the ids tokenizers gives for the
snippets plus sampled vocabulary ids alone to decode. Each input on which they differ is an
*oracle disagreement*: recorded with both outputs and a classification of where they part, never
counted as an impl failure. One JSON line each in ``oracle_disagreements.jsonl`` (beside a run's
divergences.jsonl), at most PER_CLASS per classification (the shortest inputs: a full sweep puts a
control token before every code point, which would be 170,000 lines alike), each with
``class_count``, how many its classification had in all:

    {"family": "mistral-v3", "operation": "encode", "input": {"text": "[INST] hi"},
     "oracle_a": "tokenizers 0.23.3", "output_a": [3, 29473, 12782],
     "oracle_b": "sentencepiece 0.2.3", "output_b": [1501, 17057, 29561, 12782],
     "classification": "control tokens", "first_difference": {"index": 0, ...}, "class_count": 695}

Classifications, the first that applies: ``control tokens`` (the text holds an added token's
content, or the ids a special token), ``runs of spaces``, ``leading space``, ``trailing space``,
``other whitespace``, ``byte fallback``, ``invalid UTF-8`` (a decode with U+FFFD),
``non-ASCII <category>`` (the first non-ASCII character where they part), ``other``; and
``oracle B raised`` when the second oracle failed on the input.

    python -m oracles.disagreements --family mistral-v3 --out reports/x [--budget quick]
"""
from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .tokenizers_oracle import TokenizersOracle

FILE_NAME = "oracle_disagreements.jsonl"
WINDOW = 8  # characters or pieces of context shown around the first difference
CHUNK = 4096  # texts encoded by tokenizers at a time
PER_CLASS = 100  # lines kept per family x oracle x operation x classification


@dataclass(frozen=True)
class OracleDisagreement:
    family: str
    operation: str  # "encode" or "decode"
    input: dict
    oracle_a: str
    output_a: Any
    oracle_b: str
    output_b: Any
    classification: str
    first_difference: dict


def second_oracles(folder: str | Path) -> list:
    """The second oracles that can read the family in ``folder`` (none for most families)."""
    from .sentencepiece_oracle import SentencePieceOracle
    from .tiktoken_oracle import TiktokenOracle

    found = (SentencePieceOracle.for_family(folder), TiktokenOracle.for_family(folder))
    return [oracle for oracle in found if oracle is not None]


def family_disagreements(family: str, folder: str | Path, budget, oracles: list | None = None) -> Iterator[OracleDisagreement]:
    """Every disagreement between tokenizers and each second oracle of the family on the
    budget's snippets and sweeps (``oracles`` overrides which second oracles)."""
    from properties import sweeps
    from textbound.cases import corpus_snippets

    reference = TokenizersOracle.from_dir(folder)
    snippets = corpus_snippets(budget)
    texts = list(dict.fromkeys(snippets + sweeps.sweep_texts(reference, stride=budget.sweep_stride)))
    decode_inputs = [reference.encode(text) for text in snippets] \
        + [[i] for i in sweeps.vocabulary_ids(reference, budget.sweep_stride)]
    classifier = Classifier(reference)
    for oracle in second_oracles(folder) if oracles is None else oracles:
        def record(operation: str, given: dict, output_a: Any, output_b: Any, classification: str,
                   difference: dict) -> OracleDisagreement:
            return OracleDisagreement(family, operation, given, reference.version, output_a, oracle.version,
                                      output_b, classification, difference)

        # In chunks: a full sweep is a million texts, too many encodings to hold at once.
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start:start + CHUNK]
            for text, encoding in zip(chunk, reference.tokenizer.encode_batch(chunk, add_special_tokens=False)):
                theirs, error = _outcome(oracle.encode, text)
                if error or theirs != encoding.ids:
                    yield record("encode", {"text": text}, encoding.ids, error or theirs,
                                 *classifier.encode(text, encoding, theirs, error))
        for ids in decode_inputs:
            ours = reference.decode(ids)
            theirs, error = _outcome(oracle.decode, ids)
            if error or theirs != ours:
                yield record("decode", {"ids": ids}, ours, error or theirs, *classifier.decode(ids, ours, theirs, error))


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


def write(records: Iterable[OracleDisagreement], out_dir: str | Path,
          per_class: int = PER_CLASS) -> tuple[Path, Counter]:
    """Appends the records to ``out_dir/oracle_disagreements.jsonl``, at most ``per_class`` of
    each family x second oracle x operation x classification (those with the shortest inputs),
    each line carrying ``class_count``, how many its class had in all. Returns the path and the
    counts per class."""
    counts: Counter = Counter()
    kept: dict[tuple, list] = {}
    for order, record in enumerate(records):
        key = (record.family, record.oracle_b, record.operation, record.classification)
        counts[key] += 1
        smallest = kept.setdefault(key, [])
        # a max-heap by input size (negated) of the smallest inputs so far
        heapq.heappush(smallest, (-len(json.dumps(record.input)), -order, record))
        if len(smallest) > per_class:
            heapq.heappop(smallest)
    path = Path(out_dir) / FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        for key, smallest in kept.items():
            for _, _, record in sorted(smallest, reverse=True):
                line = {**asdict(record), "class_count": counts[key]}
                file.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path, counts


def read(path: str | Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def summary(records: Iterable[dict]) -> list[dict]:
    """One row per family x second oracle x operation x classification: its count and the
    example with the shortest input, most frequent first."""
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        key = (record["family"], record["oracle_b"], record["operation"], record["classification"])
        groups.setdefault(key, []).append(record)
    rows = [{"family": family, "oracle_b": oracle, "operation": operation, "classification": classification,
             "count": members[0].get("class_count", len(members)),
             "example": min(members, key=lambda r: len(json.dumps(r["input"])))}
            for (family, oracle, operation, classification), members in groups.items()]
    return sorted(rows, key=lambda row: (row["family"], -row["count"], row["classification"]))


def markdown(records: Iterable[dict]) -> str:
    """A report.md section listing oracle disagreements apart from impl divergences."""
    rows = summary(records)
    lines = ["## Oracle disagreements (not impl failures)", ""]
    if not rows:
        return "\n".join(lines + ["None: the second oracles agree with tokenizers on every input checked.", ""])
    lines += ["| family | oracles | operation | classification | count | smallest example (A / B) |",
              "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        example = row["example"]
        shown = f"{json.dumps(example['input'], ensure_ascii=False)}: {json.dumps(example['output_a'], ensure_ascii=False)}" \
                f" / {json.dumps(example['output_b'], ensure_ascii=False)}"
        cells = [row["family"], f"{example['oracle_a']} vs {row['oracle_b']}", row["operation"],
                 row["classification"], str(row["count"]), _cell(shown)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines + [""])


def _cell(text: str, limit: int = 160) -> str:
    text = text if len(text) <= limit else text[:limit] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")


def main(argv: list[str] | None = None) -> int:
    from textbound.budget import BUDGETS
    from textbound.mistral_families import mistral_family, mistral_family_names
    from textbound.sources import FamilyError, folder_family, resolve

    parser = argparse.ArgumentParser(prog="python -m oracles.disagreements", description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", action="append", default=[], help="a family name (embedded, shared or Mistral)")
    parser.add_argument("--model-dir", action="append", default=[], help="a family folder")
    parser.add_argument("--out", required=True, help=f"the folder {FILE_NAME} is written to")
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="quick")
    args = parser.parse_args(argv)
    try:
        mistral = set(mistral_family_names())
        others = [name for name in args.family if name not in mistral]
        families = [mistral_family(name) for name in args.family if name in mistral] \
            + (resolve(others, [], []) if others else []) + [folder_family(path) for path in args.model_dir]
    except FamilyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = Path(args.out) / FILE_NAME
    path.unlink(missing_ok=True)
    for family in families:
        oracles = second_oracles(family.path)
        if not oracles:
            print(f"{family.name}: no second oracle (no SentencePiece model; tiktoken cannot express it)")
            continue
        _, counts = write(family_disagreements(family.name, family.path, BUDGETS[args.budget], oracles), args.out)
        print(f"{family.name}: {sum(counts.values())} oracle disagreements"
              + "".join(f"\n  {n:6d}  {o} {op}: {c}" for (_, o, op, c), n in counts.most_common()))
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
