"""Where built families are kept: one folder per build, under a name that hashes what went into
it, published by renaming a finished staging folder into place, so concurrent builders never see
or leave a half-written family.

    >>> publish(default_cache_dir() / "families" / "gpt2-0123", {"tokenizer.json": text})  # doctest: +SKIP
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

CACHE_ENV = "TEXTBOUND_CACHE"


def default_cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV)
    return Path(root) if root else Path.home() / ".cache" / "textbound"


def publish(target: Path, files: dict[str, str]) -> None:
    """Writes ``files`` (name -> text) into the folder ``target``, all at once or not at all."""
    def write(staging: Path) -> None:
        for filename, text in files.items():
            with (staging / filename).open("w", encoding="utf-8", newline="") as file:
                file.write(text)
    publish_built(target, write)


def publish_built(target: Path, build: Callable[[Path], None]) -> None:
    """The folder ``target`` as ``build`` fills a staging folder, renamed into place when done: all
    at once or not at all (an exception from ``build`` leaves nothing)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        build(staging)
        try:
            os.rename(staging, target)
        except OSError:
            # Another builder published first; its folder is the same, since builds are deterministic.
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
