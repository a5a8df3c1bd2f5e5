"""Real families from a second source: the vocabularies mistral-common ships, converted to
tokenizer.json folders by transformers' own converters.

mistral-common (a Python package) carries Mistral's tokenizers in ``mistral_common/data``: the
SentencePiece models ``*.model.v1`` ... ``*.model.v7`` and the Tekken vocabularies
``tekken_*.json``. Each distinct file becomes a family (origin ``"mistral"``):

- ``tokenizer.model.v1`` -> ``mistral-v1``, ``mistral_instruct_tokenizer_240323.model.v3`` ->
  ``mistral-v3``: the file is loaded as transformers loads a hub folder holding only a
  ``tokenizer.model`` (``TokenizersBackend.from_pretrained``, whose converter,
  ``SpmConverter.build_tokenizer_from_spm_proto``, follows the model's own normalizer spec);
- ``tekken_240911.json`` -> ``mistral-tekken-240911``: transformers' ``convert_tekken_tokenizer``
  (its ``MistralConverter``: byte-level BPE, the Tekken pattern as a Split pre-tokenizer, the
  special tokens first);
- a file with the same bytes as an earlier one (``.model.v7m1`` is ``.model.v7``) is left out.

Each folder holds what ``save_pretrained`` writes (tokenizer.json, tokenizer_config.json and
chat_template.jinja: the template mistral-common generates for that tokenizer version) plus
``mistral_source.json`` (oracles/mistral_source.py), naming the source file so the second oracles
(sentencepiece, tiktoken) can read the original. Builds are cached like the embedded families
(textbound.families.cache): under a directory named by a hash of the source file, the versions of
the converting packages and BUILD_FORMAT.

    >>> mistral_family("mistral-v3").path / "tokenizer.json"     # doctest: +SKIP
    PosixPath('~/.cache/textbound/families/mistral-v3-.../tokenizer.json')
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from textbound.oracles import mistral_source
from textbound.oracles import lacking
from textbound.oracles.mistral_source import (MISTRAL_COMMON, SENTENCEPIECE, SOURCE_MANIFEST, TEKKEN, SourceChanged,
                                              data_dir, file_sha256)

from .cache import default_cache_dir, publish
from .family import Family, FamilyError, NamedFamilies, named_families

# Bump when the conversion changes what it writes for unchanged sources and packages.
BUILD_FORMAT = 1
CONVERTING_PACKAGES = ("mistral_common", "transformers", "tokenizers", "sentencepiece", "protobuf")
SENTENCEPIECE_FILE = re.compile(r".+\.model\.(v\d+\w*)")
TEKKEN_FILE = re.compile(r"tekken_?(\w*)\.json")


def family_name(filename: str) -> str | None:
    """The family a shipped file becomes: ``tokenizer.model.v1`` -> ``mistral-v1``,
    ``tekken_240911.json`` -> ``mistral-tekken-240911``; None for other files."""
    if match := SENTENCEPIECE_FILE.fullmatch(filename):
        return f"mistral-{match[1]}"
    if match := TEKKEN_FILE.fullmatch(filename):
        return "-".join(filter(None, ("mistral-tekken", match[1])))
    return None


@cache
def _sources() -> dict[str, Path]:
    """Family name -> shipped file, duplicates (same bytes as an earlier name) left out."""
    root = data_dir()
    if root is None or not root.is_dir():
        return {}
    named = sorted((name, path) for path in root.iterdir() if (name := family_name(path.name)))
    seen: set[str] = set()
    sources = {}
    for name, path in named:
        digest = file_sha256(path)
        if digest not in seen:
            seen.add(digest)
            sources[name] = path
    return sources


def mistral_family_names() -> list[str]:
    """The Mistral families this installation can build (none without mistral-common); cheap."""
    return list(_sources())


def mistral_family(name: str, cache_dir: Path | None = None) -> Family:
    sources = _sources()
    if name not in sources:
        if (missing := _missing_hint()) is not None:
            raise FamilyError(f"family {name!r}: {missing}")
        raise FamilyError(f"unknown Mistral family {name!r} (mistral-common ships: {', '.join(sources)})")
    return Family(name, build_mistral_family(name, cache_dir), "mistral")


# The tokenizer.json model transformers' SpmConverter writes for each SentencePiece model type
# (sentencepiece_model.proto's TrainerSpec.ModelType); it converts no other.
SENTENCEPIECE_MODELS = {1: "Unigram", 2: "BPE"}


def mistral_model_type(name: str) -> str:
    """The model type the family's tokenizer.json will have, read from its shipped file without
    converting it: ``mistral_model_type("mistral-v3") == "BPE"`` (its SentencePiece model's type),
    ``mistral_model_type("mistral-tekken-240911") == "BPE"`` (MistralConverter's byte-level BPE)."""
    source = _sources()[name]
    if source_kind(source) == TEKKEN:
        return "BPE"
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(source.read_bytes())
    kind = model.trainer_spec.model_type
    return SENTENCEPIECE_MODELS.get(kind, f"SentencePiece {sentencepiece_model_pb2.TrainerSpec.ModelType.Name(kind)}")


def _missing_hint() -> str | None:
    """Why mistral-common's families cannot be had here (its package and extra), or None."""
    missing = lacking([MISTRAL_COMMON])
    return None if missing is None else f"mistral-common's families: {missing}"


# Converted on first use, which takes seconds each: named only, never in the run without arguments.
named_families(NamedFamilies("from mistral-common", mistral_family_names, mistral_family, in_default_run=False,
                             model_type=mistral_model_type, hint=_missing_hint))


def build_mistral_family(name: str, cache_dir: Path | None = None) -> Path:
    """The family's folder, converting its shipped file if no finished build is cached."""
    source = _sources()[name]
    versions = {package: _version(package) for package in CONVERTING_PACKAGES}
    key = hashlib.sha256(json.dumps({"format": BUILD_FORMAT, "source": file_sha256(source), "versions": versions},
                                    sort_keys=True).encode("utf-8")).hexdigest()[:20]
    target = (cache_dir or default_cache_dir()) / "families" / f"{name}-{key}"
    if not (target / SOURCE_MANIFEST).is_file():
        files = convert(source)
        files[SOURCE_MANIFEST] = json.dumps({"family": name, "source": source.name, "sha256": file_sha256(source),
                                             "kind": source_kind(source), "versions": versions}, indent=2)
        publish(target, files)
    return target


def source_kind(source: Path) -> str:
    return TEKKEN if TEKKEN_FILE.fullmatch(source.name) else SENTENCEPIECE


def convert(source: Path) -> dict[str, str]:
    """File name -> text of the folder transformers saves for the shipped tokenizer ``source``."""
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # the conversion's notes are not the harness's output
    try:
        with tempfile.TemporaryDirectory(prefix="mistral-family-") as scratch:
            tokenizer = _converted_tokenizer(source, Path(scratch))
            saved = Path(scratch) / "saved"
            tokenizer.save_pretrained(str(saved))
            return {path.name: path.read_text(encoding="utf-8") for path in sorted(saved.iterdir())}
    finally:
        transformers_logging.set_verbosity(verbosity)


def _converted_tokenizer(source: Path, scratch: Path):
    if source_kind(source) == TEKKEN:
        from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer
        # Resolves the chat template through mistral-common, as loading a tekken.json folder does.
        return convert_tekken_tokenizer(str(source))
    from mistral_common.integrations.chat_templates.chat_templates import convert_tokenizer_to_chat_template
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    folder = scratch / "spm"
    folder.mkdir()
    shutil.copyfile(source, folder / "tokenizer.model")
    tokenizer = TokenizersBackend.from_pretrained(str(folder), local_files_only=True)
    tokenizer.chat_template = convert_tokenizer_to_chat_template(str(source))
    return tokenizer


def source_file(folder: str | Path) -> Path | None:
    """The shipped file the Mistral family in ``folder`` was converted from, as the second oracles
    read it (None for other families); a file that changed since the build is an error."""
    try:
        return mistral_source.source_file(folder)
    except SourceChanged as exc:
        raise FamilyError(str(exc)) from exc


def _version(package: str) -> str | None:
    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return None
