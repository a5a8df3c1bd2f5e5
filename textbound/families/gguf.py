"""Families from GGUF files: the tokenizer a GGUF carries, as transformers reads it.

``--model-dir model.gguf`` and ``textbound compare model.gguf hf_folder/`` take a GGUF file where
a family folder is expected. The folder is what oracles/gguf_oracle.py's reading makes of the
file (tokenizer.json, tokenizer_config.json with the file's ``add_bos_token`` and chat template,
and ``gguf_source.json`` naming the file, its digest and the reader). It is built once and cached
under the file's digest and the reader's version.

    >>> gguf_family("models/qwen3-0.6b-q8.gguf")                     # doctest: +SKIP
    Family(name='qwen3-0.6b-q8', path=PosixPath('~/.cache/textbound/families/gguf/qwen3-0.6b-q8-3f2a...'), origin='gguf')
"""
from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from textbound.oracles import lacking
from textbound.oracles.gguf_oracle import GGUFReadError, file_digest, read_gguf

from .cache import default_cache_dir, publish
from .family import Family, FamilyError

GGUF_MAGIC = b"GGUF"
GGUF_SUFFIX = ".gguf"


def is_gguf(path: Path) -> bool:
    """Whether ``path`` names a GGUF file (by its suffix; the magic bytes are checked on reading)."""
    return path.suffix.lower() == GGUF_SUFFIX and not path.is_dir()


def gguf_family(path: str | Path) -> Family:
    """The family the GGUF file at ``path`` describes; FamilyError naming the file when it is not a
    readable GGUF or transformers cannot read its tokenizer."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise FamilyError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if magic != GGUF_MAGIC:
        raise FamilyError(f"{path}: not a GGUF file (it does not start with {GGUF_MAGIC!r})")
    target = (default_cache_dir() / "families" / "gguf"
              / f"{path.stem}-{file_digest(path)[:16]}-transformers-{version('transformers')}")
    if not (target / "tokenizer.json").is_file():
        missing = lacking(["gguf"])  # transformers reads a GGUF's tokenizer with it; a cached reading needs none
        if missing:
            raise FamilyError(f"{path}: reading a GGUF's tokenizer needs the gguf package: {missing}")
        try:
            publish(target, read_gguf(path))
        except GGUFReadError as exc:
            raise FamilyError(str(exc)) from None
    return Family(path.stem, target, "gguf")
