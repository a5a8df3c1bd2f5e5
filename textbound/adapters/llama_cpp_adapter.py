"""llama.cpp's tokenizer through ``llama-cpp-python`` as an ``--impl``: encode, decode and token-piece streaming.

    pip install -e '.[llama-cpp]'       # builds llama.cpp from the PyPI sdist: minutes
    textbound check --impl textbound.adapters.llama_cpp_adapter --component tokenizer,detokenizer

A family's vocabulary becomes a vocabulary-only GGUF made by llama.cpp's own converter
(``convert_hf_to_gguf.py --vocab-only``, with the ``gguf-py`` it ships) from the family's
tokenizer.json and tokenizer_config.json, cached under ``$TEXTBOUND_CACHE/llama_cpp`` by the files'
digest and the llama-cpp-python version. The converter is read from ``$TEXTBOUND_LLAMA_CPP_SOURCE``
(a folder holding convert_hf_to_gguf.py, e.g. ``vendor/llama.cpp`` of the extracted sdist), else
from the sdist of the installed llama-cpp-python, fetched once with ``pip download`` into the cache.
Two things the converter wants and a tokenizer-only family lacks are supplied, without touching the
converter: a config.json naming ``LlamaForCausalLM`` and the vocabulary's size (when the family has none: its vocabulary
code tries SentencePiece, then Hugging Face's Llama vocabulary, then byte-level BPE, which is
recognized by the digest of its pre-tokenizer's output), and a stand-in ``torch`` module (the
converter imports torch at the top; a vocabulary-only conversion never uses it, and the stand-in
fails loudly if it ever does). A family the converter refuses (an unrecognized BPE pre-tokenizer,
say) cannot be loaded: ``Tokenizer.from_dir`` raises with the converter's words.

- ``encode(text, add_special_tokens)`` is ``llama_tokenize(add_special=add_special_tokens,
  parse_special=True)`` (added tokens in the text are matched, as tokenizers does).
- ``decode(ids, skip_special_tokens)`` is ``llama_detokenize(remove_special=False,
  unparse_special=not skip_special_tokens)``, its bytes read as UTF-8 with U+FFFD for invalid ones.
  An id outside the vocabulary raises ValueError here: llama.cpp aborts the process on one.
- ``IncrementalDetokenizer`` streams as llama.cpp's server does: each id's
  ``llama_token_to_piece(lstrip=0, special=not skip_special_tokens)`` bytes appended, and the text
  shown up to an unfinished UTF-8 sequence at the end (an incremental UTF-8 decoder holds it;
  invalid bytes become U+FFFD, as the server's JSON writer replaces them).
- ``token_to_id``/``id_to_token`` read ``llama_vocab_get_text``; ``vocab_size`` is
  ``llama_vocab_n_tokens``.

    >>> tok = Tokenizer.from_dir(path)                                   # doctest: +SKIP
    >>> tok.encode("Hi there"), tok.decode([13048, 1052])                # doctest: +SKIP
    ([13048, 1052], 'Hi there')
"""
from __future__ import annotations

import codecs
import ctypes
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from functools import cache
from pathlib import Path

from . import engine_version, require

llama_cpp = require("llama-cpp-python", "llama_cpp")
# llama-cpp-python prints llama.cpp's log lines at or above this logger's level: errors only.
logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)

__version__ = engine_version("llama-cpp-python")
SOURCE_ENV = "TEXTBOUND_LLAMA_CPP_SOURCE"
CONVERTER = "convert_hf_to_gguf.py"
# What the converter needs of the sdist: itself, its model classes and the gguf-py it imports.
CONVERTER_PARTS = (CONVERTER, "conversion", "gguf-py")
FAMILY_FILES = ("tokenizer.json", "tokenizer_config.json")
REFUSED = "refused.txt"
REFUSAL_LINES = 3  # of the converter's stderr kept as its words
DEFAULT_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
# Run in the converter's process before the converter: a torch that fails when anything is called.
TORCH_STAND_IN = """
import contextlib, importlib.machinery, runpy, sys, types
class Absent:
    def __init__(self, name): self.name = name
    def __getattr__(self, name): return Absent(self.name + "." + name)
    def __call__(self, *args, **kwargs): raise RuntimeError(self.name + " called: a vocabulary-only conversion needs no torch")
    def __mro_entries__(self, bases): return (object,)
torch = types.ModuleType("torch")
torch.__spec__ = importlib.machinery.ModuleSpec("torch", None)  # found, yet without a distribution: "not installed"
torch.__getattr__ = lambda name: Absent("torch." + name)
torch.inference_mode = contextlib.nullcontext
sys.modules["torch"] = torch
converter = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, converter.rsplit("/", 1)[0])
runpy.run_path(converter, run_name="__main__")
"""
PIECE_BYTES = 256  # first guess of a piece's length; llama_token_to_piece says when it needs more


def _cache_dir() -> Path:
    from textbound.families.cache import default_cache_dir
    return default_cache_dir() / "llama_cpp"


@cache
def converter_dir() -> Path:
    """The folder holding convert_hf_to_gguf.py: $TEXTBOUND_LLAMA_CPP_SOURCE, else the installed
    version's sdist, fetched and extracted once."""
    if os.environ.get(SOURCE_ENV):
        folder = Path(os.environ[SOURCE_ENV])
        if not (folder / CONVERTER).is_file():
            raise FileNotFoundError(f"${SOURCE_ENV}={folder} holds no {CONVERTER}")
        return folder
    version = llama_cpp.__version__
    target = _cache_dir() / f"converter-{version}"
    if not (target / CONVERTER).is_file():
        _extract_converter(version, target)
    return target


def _extract_converter(version: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as staging:
        subprocess.run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}", "--no-deps",
                        "--no-binary", ":all:", "-d", staging], check=True,
                       capture_output=True)
        sdist = next(Path(staging).glob("llama_cpp_python-*.tar.gz"))
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
        out = Path(staging) / "converter"
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(prefix)
                       and m.name[len(prefix):].split("/", 1)[0] in CONVERTER_PARTS]
            for member in members:
                member.name = member.name[len(prefix):]
            archive.extractall(out, members=members, filter="data")
        os.replace(out, target)


def vocab_gguf(family: Path) -> Path:
    """The family's vocabulary-only GGUF, converted on first use. A refusal is kept beside where the
    GGUF would be (refused.txt: the same files and converter refuse again) and raised as ValueError."""
    family = Path(family)
    digest = hashlib.sha256(json.dumps([llama_cpp.__version__, *(
        (family / name).read_text(encoding="utf-8") if (family / name).is_file() else None
        for name in (*FAMILY_FILES, "config.json"))]).encode("utf-8")).hexdigest()[:20]
    target = _cache_dir() / "vocab" / f"{family.name}-{digest}"
    if not target.is_dir():
        _convert(family, target)
    if (target / REFUSED).is_file():
        raise ValueError(f"llama.cpp's converter refused {family}: {(target / REFUSED).read_text(encoding='utf-8')}")
    return target / "vocab.gguf"


def _default_config(family: Path) -> dict:
    """The config.json given a family without one: Llama's, sized to the vocabulary (the converter
    checks every id is below vocab_size, which would otherwise be LlamaConfig's default)."""
    import tokenizers
    vocabulary = tokenizers.Tokenizer.from_file(str(family / "tokenizer.json")).get_vocab(with_added_tokens=True)
    return {**DEFAULT_CONFIG, "vocab_size": max(vocabulary.values()) + 1}


def _convert(family: Path, target: Path) -> None:
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
        done = subprocess.run([sys.executable, "-c", TORCH_STAND_IN, str(converter_dir() / CONVERTER), "--vocab-only",
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


class Tokenizer:
    """A family's vocabulary loaded by llama.cpp (vocab_only: no weights)."""

    def __init__(self, gguf: Path):
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(str(gguf).encode("utf-8"), params)
        if not self.model:
            raise ValueError(f"llama.cpp could not load {gguf}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.vocab_size = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self._texts = [llama_cpp.llama_vocab_get_text(self.vocab, i).decode("utf-8", "replace")
                       for i in range(self.vocab_size)]
        self._ids = {text: i for i, text in reversed(list(enumerate(self._texts)))}  # the first id of a text

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(vocab_gguf(Path(path)))

    def __del__(self):
        if getattr(self, "model", None):
            llama_cpp.llama_model_free(self.model)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8  # a first guess: a token covers a byte at least, besides BOS/EOS
        while True:
            tokens = (llama_cpp.llama_token * capacity)()
            count = llama_cpp.llama_tokenize(self.vocab, data, len(data), tokens, capacity, add_special_tokens, True)
            if count >= 0:
                return list(tokens[:count])
            capacity = -count

    def _checked(self, ids) -> list[int]:
        ids = [int(i) for i in ids]
        for position, token in enumerate(ids):
            if not 0 <= token < self.vocab_size:
                raise ValueError(f"invalid token id {token} at position {position}: not in llama.cpp's vocabulary "
                                 f"of {self.vocab_size} (llama.cpp aborts on it)")
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        ids = self._checked(ids)
        tokens = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
        capacity = 16 * len(ids) + 16
        while True:
            buffer = ctypes.create_string_buffer(capacity)
            size = llama_cpp.llama_detokenize(self.vocab, tokens, len(ids), buffer, capacity, False,
                                              not skip_special_tokens)
            if size >= 0:
                return buffer.raw[:size].decode("utf-8", "replace")
            capacity = -size

    def piece(self, token: int, special: bool) -> bytes:
        """``llama_token_to_piece``: the bytes one token adds in a stream."""
        (token,) = self._checked([token])
        capacity = PIECE_BYTES
        while True:
            buffer = ctypes.create_string_buffer(capacity)
            size = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, capacity, 0, special)
            if size >= 0:
                return buffer.raw[:size]
            capacity = -size

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._texts[token_id] if 0 <= token_id < self.vocab_size else None


class IncrementalDetokenizer:
    """Token pieces, shown up to an unfinished UTF-8 sequence (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True, prompt_ids=None):
        self._tokenizer, self._special = tokenizer, not skip_special_tokens
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self.prompt_text = self._decode(prompt_ids or [])
        self.text = ""

    def _decode(self, ids) -> str:
        return self._utf8.decode(b"".join(self._tokenizer.piece(i, self._special) for i in ids))

    def add(self, ids) -> str:
        delta = self._decode(ids)
        self.text += delta
        return delta

    def flush(self) -> str:
        delta = self._utf8.decode(b"", final=True)
        self.text += delta
        return delta
