"""llama.cpp's source as a llama-cpp-python sdist carries it, and the vocabulary-only GGUF its
converter makes of a family; no engine is imported here, so the llama-cpp-python adapter
(textbound.adapters.llama_cpp_adapter) and the llama-server build (textbound.server.launch) share it.

The source is the sdist's ``vendor/llama.cpp``, fetched once with ``pip download`` (the registry's
ordinary client) and extracted under ``$TEXTBOUND_CACHE/llama_cpp``: all of it to build from, or only
the parts the converter needs.

A family's vocabulary becomes a GGUF by llama.cpp's own converter (``convert_hf_to_gguf.py
--vocab-only``, with the ``gguf-py`` it ships) from the family's tokenizer.json and
tokenizer_config.json, cached by the files' digest and the llama-cpp-python version. Two things the
converter wants and a tokenizer-only family lacks are supplied, without touching the converter: a
config.json naming ``LlamaForCausalLM`` and the vocabulary's size (when the family has none: its
vocabulary code tries SentencePiece, then Hugging Face's Llama vocabulary, then byte-level BPE,
which is recognized by the digest of its pre-tokenizer's output), and a stand-in ``torch`` module
(the converter imports torch at the top; a vocabulary-only conversion never uses it, and the
stand-in fails loudly if it ever does). A family the converter refuses (an unrecognized BPE
pre-tokenizer, say) raises ValueError with the converter's words.

    >>> source = extract_source("0.3.36", cache_dir() / "converter-0.3.36", CONVERTER_PARTS)  # doctest: +SKIP
    >>> vocab_gguf(Path("/work/shared/models/qwen3"), "0.3.36", source).name                  # doctest: +SKIP
    'vocab.gguf'
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CONVERTER = "convert_hf_to_gguf.py"
# What the converter needs of the sdist: itself, its model classes and the gguf-py it imports.
CONVERTER_PARTS = (CONVERTER, "conversion", "gguf-py")
FAMILY_FILES = ("tokenizer.json", "tokenizer_config.json")
REFUSED = "refused.txt"
REFUSAL_LINES = 3  # of the converter's stderr kept as its words
DEFAULT_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}


def cache_dir() -> Path:
    """``$TEXTBOUND_CACHE/llama_cpp``: sources, builds and vocabulary GGUFs."""
    from textbound.families.cache import default_cache_dir
    return default_cache_dir() / "llama_cpp"


def extract_source(version: str, target: Path, parts: tuple[str, ...] | None = None) -> Path:
    """``target`` holding the sdist's vendor/llama.cpp (only its top-level ``parts``, where given),
    fetched and extracted on first use, published whole by a rename."""
    marker = target / (parts[0] if parts else "CMakeLists.txt")
    if marker.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as staging:
        subprocess.run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}", "--no-deps",
                        "--no-binary", ":all:", "-d", staging], check=True,
                       capture_output=True)
        sdist = next(Path(staging).glob("llama_cpp_python-*.tar.gz"))
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
        out = Path(staging) / "source"
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(prefix) and m.name != prefix
                       and (parts is None or m.name[len(prefix):].split("/", 1)[0] in parts)]
            for member in members:
                member.name = member.name[len(prefix):]
            archive.extractall(out, members=members, filter="data")
        try:
            os.replace(out, target)
        except OSError:
            if not marker.exists():  # else another process published it first
                raise
    return target


def vocab_gguf(family: Path, version: str, source: Path) -> Path:
    """The family's vocabulary-only GGUF, converted by ``source``'s convert_hf_to_gguf.py on first use.
    A refusal is kept beside where the GGUF would be (refused.txt: the same files and converter refuse
    again) and raised as ValueError."""
    family = Path(family)
    digest = hashlib.sha256(json.dumps([version, *(
        (family / name).read_text(encoding="utf-8") if (family / name).is_file() else None
        for name in (*FAMILY_FILES, "config.json"))]).encode("utf-8")).hexdigest()[:20]
    target = cache_dir() / "vocab" / f"{family.name}-{digest}"
    if not target.is_dir():
        _convert(family, target, source)
    if (target / REFUSED).is_file():
        raise ValueError(f"llama.cpp's converter refused {family}: {(target / REFUSED).read_text(encoding='utf-8')}")
    return target / "vocab.gguf"


def _default_config(family: Path) -> dict:
    """The config.json given a family without one: Llama's, sized to the vocabulary (the converter
    checks every id is below vocab_size, which would otherwise be LlamaConfig's default)."""
    import tokenizers
    vocabulary = tokenizers.Tokenizer.from_file(str(family / "tokenizer.json")).get_vocab(with_added_tokens=True)
    return {**DEFAULT_CONFIG, "vocab_size": max(vocabulary.values()) + 1}


def _convert(family: Path, target: Path, source: Path) -> None:
    """Publishes ``target`` holding vocab.gguf, or refused.txt with the converter's last words."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name in FAMILY_FILES:
            if (family / name).is_file():
                shutil.copyfile(family / name, staging / name)
        config = family / "config.json"
        (staging / "config.json").write_text(config.read_text(encoding="utf-8") if config.is_file()
                                             else json.dumps(_default_config(family)), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "textbound.oracles.torch_stand_in", str(source / CONVERTER), "--vocab-only",
                               "--outfile", str(staging / "vocab.gguf"), str(staging)],
                              capture_output=True, text=True)
        if done.returncode != 0:  # the failing line and the error, at the end of the traceback
            words = done.stderr.strip().splitlines()[-REFUSAL_LINES:]
            (staging / REFUSED).write_text(" / ".join(w.strip() for w in words) or f"exit status {done.returncode}",
                                           encoding="utf-8")
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():  # else another process published it first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
