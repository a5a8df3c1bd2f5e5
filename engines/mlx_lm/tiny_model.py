"""Writes a tiny random-weight model beside a family's tokenizer, with mlx and mlx-lm themselves, for
``python -m mlx_lm.server`` to load: run by the python of the server's environment (mlx-lm with mlx's
CPU wheels), never importing the harness.

    python engines/mlx_lm/tiny_model.py FAMILY_DIR OUT_DIR [--model-type qwen3]

Server entry point: ``python -m mlx_lm.server --model OUT_DIR`` itself (tools/serve_engine.py --engine
mlx-lm) loads what this writes through ``mlx_lm.utils.load``; nothing here calls the server's text
boundary.

The model is mlx-lm's own class for ``model_type`` (``mlx_lm.models.<model_type>.Model``), one layer
of width 16, its weights drawn by mlx from a fixed seed (the same family writes the same model) and
saved by ``mlx_lm.utils.save_model`` and ``save_config``; its vocabulary is the tokenizer's length
(added tokens included), its end-of-sequence id the tokenizer's. The family's files are copied
beside it unchanged, so the server reads the very tokenizer and chat template the oracles read.
Prints OUT_DIR.

    $ python engines/mlx_lm/tiny_model.py /models/qwen3 /tmp/tiny-qwen3 --model-type qwen3
    /tmp/tiny-qwen3
"""
from __future__ import annotations

import argparse
import importlib
import shutil
from pathlib import Path

import mlx.core as mx
from mlx_lm.utils import save_config, save_model
from transformers import AutoTokenizer

SEED = 0
WIDTH = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "num_key_value_heads": 1, "head_dim": 8, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "tie_word_embeddings": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--model-type", default="llama", help="an mlx_lm.models module (default llama)")
    options = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(options.family)
    config = {"model_type": options.model_type, "vocab_size": len(tokenizer),
              "eos_token_id": tokenizer.eos_token_id, **WIDTH}
    architecture = importlib.import_module(f"mlx_lm.models.{options.model_type}")
    mx.random.seed(SEED)
    model = architecture.Model(architecture.ModelArgs.from_dict(config))
    mx.eval(model.parameters())
    save_model(options.out, model)
    save_config(config, options.out / "config.json")
    for source in options.family.iterdir():
        if source.is_file() and source.name != "config.json":
            shutil.copyfile(source, options.out / source.name)
    print(options.out)


if __name__ == "__main__":
    main()
