"""Writes a tiny random-weight causal LM beside a family's tokenizer, with transformers itself, for
``transformers serve`` to load: run by the python of the server's environment (torch and
transformers), never importing the harness.

    python engines/transformers_serve/tiny_model.py FAMILY_DIR OUT_DIR [--model-type qwen3]

Server entry point: ``transformers serve MODEL`` itself (textbound.server.launch's
``transformers_serve_plan``) loads what this writes; nothing here calls the server's text boundary.

The model's config is ``AutoConfig.for_model(model_type)`` shrunk to one layer of width 16 (seeded
weights: the same family writes the same model), its vocabulary the tokenizer's length, its special
ids the tokenizer's; the tokenizer is the family's, saved by ``AutoTokenizer.save_pretrained`` so its
chat template goes with it. Prints OUT_DIR.

    $ python engines/transformers_serve/tiny_model.py /models/qwen3 /tmp/tiny-qwen3
    /tmp/tiny-qwen3
"""
from __future__ import annotations

import argparse

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

SEED = 0
WIDTH = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "num_key_value_heads": 1, "head_dim": 8, "max_position_embeddings": 4096}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family")
    parser.add_argument("out")
    parser.add_argument("--model-type", default="llama", help="the config's model_type (default llama)")
    options = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(options.family)
    config = AutoConfig.for_model(options.model_type, vocab_size=len(tokenizer), tie_word_embeddings=True,
                                  bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.pad_token_id, **WIDTH)
    torch.manual_seed(SEED)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(options.out)
    tokenizer.save_pretrained(options.out)
    print(options.out)


if __name__ == "__main__":
    main()
