"""The vocabulary a family was converted from, for the second oracles that read the original.

A family converted from one of mistral-common's shipped tokenizers (textbound.families.mistral)
holds ``mistral_source.json`` beside its tokenizer.json: the shipped file's name, its hash and its
kind, ``"sentencepiece"`` (a ``.model``, which the sentencepiece oracle loads) or ``"tekken"`` (a
Tekken vocabulary, which the tiktoken oracle loads through mistral-common). The file itself stays
in the installed mistral-common; one that changed since the build is refused, since the family
was converted from other bytes.

    >>> source_file(mistral_v3_folder, SENTENCEPIECE)        # doctest: +SKIP
    PosixPath('.../mistral_common/data/mistral_instruct_tokenizer_240323.model.v3')
    >>> source_file(mistral_v3_folder, TEKKEN) is None, source_file(gpt2_folder) is None   # doctest: +SKIP
    (True, True)
"""
from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from . import lacking, require

MISTRAL_COMMON = "mistral-common"
SOURCE_MANIFEST = "mistral_source.json"
SENTENCEPIECE = "sentencepiece"
TEKKEN = "tekken"


class SourceChanged(Exception):
    """The file a family names is not the installed mistral-common's: the family must be rebuilt."""


def data_dir() -> Path | None:
    """mistral-common's folder of shipped tokenizers, or None when the package cannot be used."""
    if lacking([MISTRAL_COMMON]):
        return None
    return Path(require(MISTRAL_COMMON).__file__).resolve().parent / "data"


def source_manifest(folder: str | Path) -> dict | None:
    """What ``mistral_source.json`` in a family folder says, or None for other families."""
    path = Path(folder) / SOURCE_MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def source_file(folder: str | Path, kind: str | None = None) -> Path | None:
    """The shipped file the family in ``folder`` was converted from, checked against its recorded
    hash; None for other families, and for those of another kind than ``kind`` when given."""
    manifest = source_manifest(folder)
    if manifest is None:
        return None
    root = data_dir()
    if root is None:
        raise lacking([MISTRAL_COMMON])  # the family's source is one of its files
    source = root / manifest["source"]
    if not source.is_file() or file_sha256(source) != manifest["sha256"]:
        raise SourceChanged(f"{folder}: its source {manifest['source']} is not the installed mistral-common's "
                            f"(rebuild the family)")
    return source if kind in (None, manifest["kind"]) else None


@cache
def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
