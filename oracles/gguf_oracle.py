"""transformers' reading of a GGUF file's tokenizer: the family folder a transformers user gets from
``AutoTokenizer.from_pretrained(folder, gguf_file=name)``, saved with ``save_pretrained``.

A GGUF carries no tokenizer.json: its vocabulary, merges, token types, pre-tokenizer name,
BOS/EOS ids, ``add_bos_token`` and chat template are metadata under llama.cpp's key names, which
transformers (``integrations/gguf/gguf_tokenizer_mapping.py``) turns back into a fast tokenizer.
That reading is the reference here, stamped with transformers' version; what the file carries
(the template llama.cpp renders, its BOS flag) comes through it unchanged.

transformers' GGUF reader imports torch at the top for the tensors, which reading the tokenizer
never touches. The reading runs in a child process (``python -m textbound.oracles.gguf_oracle GGUF OUT``)
that holds a stand-in torch, so the harness's own process never sees one.

    >>> files = read_gguf(Path("qwen3.gguf"))                                    # doctest: +SKIP
    >>> sorted(files)
    ['gguf_source.json', 'tokenizer.json', 'tokenizer_config.json']
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .chat_oracle import Raised
from .torch_stand_in import install as install_torch_stand_in

SOURCE_FILE = "gguf_source.json"  # in a folder read from a GGUF: the file's name, digest and reader
KEPT_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", SOURCE_FILE)
TIMEOUT_SECONDS = 300


class GGUFReadError(Exception):
    """transformers could not read the GGUF's tokenizer; the message names the file and says why."""


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, read in blocks (a GGUF with weights is gigabytes)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_gguf(path: Path) -> dict[str, str]:
    """The family folder's files (name -> text) transformers makes of the GGUF at ``path``."""
    path = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="textbound-gguf-") as out:
        try:
            done = subprocess.run([sys.executable, "-m", "textbound.oracles.gguf_oracle", str(path), out],
                                  capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise GGUFReadError(f"{path}: transformers did not read it within {TIMEOUT_SECONDS} s") from None
        if done.returncode != 0:
            # The child's last line says why (its exception, as _main prints it); warnings come before.
            words = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise GGUFReadError(f"{path}: transformers cannot read its tokenizer: {words}")
        return {name: (Path(out) / name).read_text(encoding="utf-8")
                for name in KEPT_FILES if (Path(out) / name).is_file()}


def _read_in_child(gguf: Path, out: Path) -> None:
    # transformers first: it decides that torch is absent before the stand-in exists.
    import transformers
    from transformers import PreTrainedTokenizerFast
    install_torch_stand_in("reading a GGUF's tokenizer")
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.save_pretrained(str(out))
    source = {"gguf": gguf.name, "sha256": file_digest(gguf), "reader": f"transformers {transformers.__version__}"}
    (out / SOURCE_FILE).write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")


def _main(gguf: Path, out: Path) -> int:
    """The child's entry: a file transformers cannot read is its exception on one line, exit 1."""
    try:
        _read_in_child(gguf, out)
    except Exception as exc:  # noqa: BLE001 - a GGUF may be malformed in any way transformers trips on
        raised = Raised.of(exc)  # its class named with its module: struct.error, not a bare "error"
        print(f"{raised.error_class}: {' '.join(raised.message.split())}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(Path(sys.argv[1]), Path(sys.argv[2])))
