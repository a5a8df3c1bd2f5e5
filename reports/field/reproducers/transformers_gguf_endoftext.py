"""transformers reads a byte-level BPE GGUF with an extra special token, <|endoftext|>, that the file
does not have: its id is one past the vocabulary (the model's embedding has no such row), and the
text "<|endoftext|>" encodes to it.

Needs: transformers (5.24), tokenizers, gguf (llama.cpp's gguf-py), torch (transformers' GGUF
reader imports it). Runs in an empty folder; exits 1 while the bug is there, 0 once it is fixed.

The reference: the file's own vocabulary, as llama.cpp loads it (tokenizer.ggml.tokens), and the
tokenizer.json it was made from, which have no <|endoftext|>.
"""
import json
import sys
import tempfile
from pathlib import Path

import gguf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

folder = Path(tempfile.mkdtemp())
# A byte-level BPE vocabulary without <|endoftext|> (as Llama 3's: its specials are <|begin_of_text|>...).
source = Tokenizer(models.BPE())
source.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
source.decoder = decoders.ByteLevel()
source.train_from_iterator(["hello world, the tokenizer of a model"] * 50,
                           trainers.BpeTrainer(vocab_size=300, special_tokens=["<|begin_of_text|>"],
                                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
vocab = sorted(source.get_vocab().items(), key=lambda item: item[1])
writer = gguf.GGUFWriter(str(folder / "model.gguf"), "llama")
writer.add_tokenizer_model("gpt2")
writer.add_tokenizer_pre("llama-bpe")
writer.add_token_list([token for token, _ in vocab])
writer.add_token_types([gguf.TokenType.CONTROL if token == "<|begin_of_text|>" else gguf.TokenType.NORMAL
                        for token, _ in vocab])
writer.add_token_merges([" ".join(m) if isinstance(m, list) else m
                         for m in json.loads(source.to_str())["model"]["merges"]])
writer.add_bos_token_id(source.token_to_id("<|begin_of_text|>"))
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()

read = PreTrainedTokenizerFast.from_pretrained(str(folder), gguf_file="model.gguf")
expected = len(vocab)
print(f"vocabulary in the file: {expected}; transformers' tokenizer: {len(read)}")
print(f'"<|endoftext|>" encodes to {read.encode("<|endoftext|>", add_special_tokens=False)} '
      f"(the file's own tokens: {source.encode('<|endoftext|>').ids})")
sys.exit(1 if len(read) != expected else 0)
