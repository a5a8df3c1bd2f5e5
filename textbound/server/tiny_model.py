"""A tiny model a llama.cpp server can serve: a family's real vocabulary and chat template on two
small layers of seeded random weights, written as a GGUF with the ``gguf`` package (no torch, no hub).

The vocabulary is the family's vocabulary-only GGUF made by llama.cpp's own converter
(textbound.server.llama_cpp_source.vocab_gguf): every ``tokenizer.*`` key of it (tokens, types,
merges or scores, special ids, add_bos/eos, pre-tokenizer, chat template) is copied unchanged, so the
server tokenizes and renders exactly as for the real model. The rest is a Llama architecture sized
by ``TinyModel``; its output is noise, which is the point: the server's text boundary is under test,
and random ids are the hardest input for its detokenizer, stops and constrained decoding.
Written once per (vocabulary GGUF, plan, gguf version) under ``$TEXTBOUND_CACHE/llama_cpp/tiny``.

    >>> path = tiny_gguf(vocab_gguf(Path("/work/shared/models/qwen3"), "0.3.36", source))  # doctest: +SKIP
    >>> path.name, path.stat().st_size < 64 << 20                                          # doctest: +SKIP
    ('model.gguf', True)
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from textbound.oracles import require

TOKENIZER_KEYS = "tokenizer."
ARCHITECTURE = "llama"
MODEL_FILE = "model.gguf"


@dataclass(frozen=True)
class TinyModel:
    """The architecture and weights of a tiny Llama: ``n_embd`` wide, ``n_layer`` blocks of ``n_head``
    heads, weights drawn from N(0, ``scale``²) by a generator seeded with ``seed``.

    >>> TinyModel().n_embd // TinyModel().n_head
    16
    """

    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_ff: int = 128
    n_ctx: int = 4096
    scale: float = 0.5  # wide enough logits that sampling is not uniform over the vocabulary
    seed: int = 0


def tiny_gguf(vocabulary: Path, plan: TinyModel = TinyModel(), cache: Path | None = None) -> Path:
    """The tiny model of the vocabulary-only GGUF ``vocabulary``, written on first use; MissingExtra
    naming textbound[families] without the gguf package."""
    from .llama_cpp_source import cache_dir
    require("gguf")
    digest = hashlib.sha256()
    digest.update(json.dumps([dataclasses.asdict(plan), _gguf_version()]).encode("utf-8"))
    digest.update(Path(vocabulary).read_bytes())
    target = (cache or cache_dir() / "tiny") / f"{Path(vocabulary).parent.name}-{digest.hexdigest()[:20]}" / MODEL_FILE
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkstemp(prefix=".model.", suffix=".gguf", dir=target.parent)[1])
        try:
            write_tiny_gguf(vocabulary, plan, staging)
            os.replace(staging, target)
        finally:
            staging.unlink(missing_ok=True)
    return target


def _gguf_version() -> str:
    from importlib.metadata import version
    return version("gguf")


def write_tiny_gguf(vocabulary: Path, plan: TinyModel, out: Path) -> None:
    """Writes the tiny model to ``out``: the vocabulary's tokenizer keys, ``plan``'s tensors."""
    import gguf
    import numpy as np
    reader = gguf.GGUFReader(str(vocabulary))
    tokenizer_fields = [field for name, field in reader.fields.items() if name.startswith(TOKENIZER_KEYS)]
    n_vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    writer = gguf.GGUFWriter(str(out), ARCHITECTURE)
    writer.add_name(f"textbound tiny {Path(vocabulary).parent.name}")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(plan.n_ctx)
    writer.add_embedding_length(plan.n_embd)
    writer.add_block_count(plan.n_layer)
    writer.add_feed_forward_length(plan.n_ff)
    writer.add_head_count(plan.n_head)
    writer.add_head_count_kv(plan.n_head)
    writer.add_rope_dimension_count(plan.n_embd // plan.n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    for field in tokenizer_fields:
        array = field.types[0] == gguf.GGUFValueType.ARRAY
        writer.add_key_value(field.name, field.contents(), field.types[0], field.types[-1] if array else None)
    random = np.random.default_rng(plan.seed)
    for name, shape in _tensor_shapes(plan, n_vocab):
        if name.endswith("_norm.weight"):
            writer.add_tensor(name, np.ones(shape, dtype=np.float32))
        else:
            writer.add_tensor(name, (random.standard_normal(shape) * plan.scale).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _tensor_shapes(plan: TinyModel, n_vocab: int) -> list[tuple[str, tuple[int, ...]]]:
    """llama.cpp's Llama tensors, numpy shapes (rows, columns); the output shares token_embd."""
    shapes = [("token_embd.weight", (n_vocab, plan.n_embd)), ("output_norm.weight", (plan.n_embd,))]
    for block in range(plan.n_layer):
        shapes += [(f"blk.{block}.{name}.weight", shape) for name, shape in (
            ("attn_norm", (plan.n_embd,)), ("attn_q", (plan.n_embd, plan.n_embd)),
            ("attn_k", (plan.n_embd, plan.n_embd)), ("attn_v", (plan.n_embd, plan.n_embd)),
            ("attn_output", (plan.n_embd, plan.n_embd)), ("ffn_norm", (plan.n_embd,)),
            ("ffn_gate", (plan.n_ff, plan.n_embd)), ("ffn_up", (plan.n_ff, plan.n_embd)),
            ("ffn_down", (plan.n_embd, plan.n_ff)))]
    return shapes
