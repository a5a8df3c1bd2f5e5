"""GGUF files made from family folders for the tests, by llama.cpp's own gguf-py: its vocabulary
reader (``gguf.vocab.BpeVocab``: tokens and token types of a byte-level BPE tokenizer.json), its
special-vocabulary reader (``SpecialVocab``: merges, BOS/EOS ids, ``add_bos_token``, the chat
template) and its writer. No weights: a tokenizer-only GGUF, which is all transformers reads.

    >>> write_gguf(build_family("qwen"), tmp_path / "qwen.gguf", pre="qwen2")   # doctest: +SKIP
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path


def write_gguf(folder: Path, out: Path, *, pre: str, architecture: str = "qwen2",
               config_changes: dict | None = None) -> Path:
    """A GGUF of ``folder``'s byte-level BPE tokenizer, with ``config_changes`` applied to its
    tokenizer_config.json first (so a GGUF can carry a flipped flag or another template)."""
    import gguf
    from gguf.vocab import BpeVocab, SpecialVocab
    with tempfile.TemporaryDirectory() as staging:
        source = Path(staging)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(folder / name, source / name)
        if config_changes:
            config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
            config.update(config_changes)
            (source / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        tokens = list(BpeVocab(source).all_tokens())
        writer = gguf.GGUFWriter(str(out), architecture)
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(pre)
        writer.add_token_list([text for text, _, _ in tokens])
        writer.add_token_types([kind for _, _, kind in tokens])
        SpecialVocab(source, load_merges=True, n_vocab=len(tokens)).add_to_gguf(writer, quiet=True)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return out
