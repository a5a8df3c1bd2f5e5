"""The code points where the oracle's Unicode tables and Python's disagree, kept on disk between runs.

Probing them (``properties.sweeps.unicode_disagreements``) costs seconds of CPU in every worker of
every run, and the answer depends only on the libraries that hold the tables and on the probes
themselves, so it is stored under a name that hashes those:

    >>> disputed_code_points(4096)  # probed on the first call, read from the store on later ones
    {81921: ('\\p{L} Oniguruma vs unicodedata', '\\p{Cn} Oniguruma vs unicodedata'), ...}  # doctest: +SKIP

A file that cannot be read is probed again and rewritten, never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
from functools import cache
from pathlib import Path

import regex
import tokenizers

from textbound.properties import sweeps

from ..families.cache import default_cache_dir


def _store(step: int) -> Path:
    probes = hashlib.sha256(Path(sweeps.__file__).read_bytes()).hexdigest()[:16]
    versions = f"tokenizers {tokenizers.__version__}, regex {regex.__version__}, unicodedata {unicodedata.unidata_version}"
    key = hashlib.sha256(f"{versions}/{probes}/{step}".encode()).hexdigest()[:20]
    return default_cache_dir() / "sweeps" / f"unicode-disagreements-{key}.json"


@cache
def disputed_code_points(step: int = 1) -> dict[int, tuple[str, ...]]:
    """``sweeps.unicode_disagreements(step)``, read from the store when an earlier run wrote it."""
    store = _store(step)
    try:
        return {int(cp): tuple(probes) for cp, probes in json.loads(store.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    found = sweeps.unicode_disagreements(step)
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=store.parent, delete=False, suffix=".tmp") as file:
            json.dump({str(cp): list(probes) for cp, probes in found.items()}, file)
        os.replace(file.name, store)  # whole or not at all, whoever writes it first
    except OSError:
        pass  # a read-only cache costs the probing again next time, nothing else
    return found
