"""llama.cpp's converter turns a byte-fallback BPE tokenizer.json into a SentencePiece ("llama")
vocabulary without its pre-tokenizer, and says nothing: a Split that removes whitespace is dropped,
so llama.cpp tokenizes the whitespace tokenizers never sees (textbound's field run of
llama-cpp-python: `tokenizer/encode/ids: adds tokens at the end`, its `splitters` fixture:
' ' -> [▁, ▁], tokenizers []).

Where: gguf-py/gguf/vocab.py, LlamaHfVocab.__init__ accepts any tokenizer.json whose model is a
byte-fallback BPE and whose decoder is a Sequence, and reads only its vocabulary, merges' tokens
and added tokens: the normalizer and pre_tokenizer are never looked at (conversion/base.py,
_set_vocab_llama_hf). llama.cpp's SentencePiece tokenizer (src/llama-vocab.cpp, llm_tokenizer_spm)
has no pre-tokenizer: it escapes spaces as ▁ and prepends one. The byte-level BPE path refuses a
pre-tokenizer it does not know ("BPE pre-tokenizer was not recognized"); this path converts it into
other ids without a warning.

Needs: llama.cpp's source ($LLAMA_CPP: convert_hf_to_gguf.py, conversion/, gguf-py), its
llama-tokenize tool ($LLAMA_TOKENIZE), and the converter's imports (torch, transformers, tokenizers).
Runs in an empty folder; exits 1 while the bug is there, 0 once the ids agree or the converter
refuses the file, 2 when llama-tokenize fails (not the bug).

The reference's ids: tokenizers 0.23.3 on this tokenizer.json, `Tokenizer.encode(text,
add_special_tokens=False).ids`, as recorded when this was written.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

source_dir, tokenize_tool = Path(os.environ["LLAMA_CPP"]), os.environ["LLAMA_TOKENIZE"]
VOCAB = {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "▁a": 5}
SPECIAL = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True} for c, i in list(VOCAB.items())[:3]]
TOKENIZER = {  # whitespace is removed before Metaspace marks each remaining piece
    "version": "1.0", "truncation": None, "padding": None, "added_tokens": SPECIAL, "normalizer": None,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\S+"}, "behavior": "Removed", "invert": True},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False}]},
    "post_processor": None,
    "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"},
                                                 {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                                                  "split": False}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
              "vocab": VOCAB, "merges": [["▁", "a"]]}}
REFERENCE = {" ": [], "a  a": [5, 5]}  # tokenizers: whitespace removed; '▁a' '▁a'

folder, out = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp()) / "vocab.gguf"
(folder / "tokenizer.json").write_text(json.dumps(TOKENIZER, ensure_ascii=False), encoding="utf-8")
(folder / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}))
(folder / "config.json").write_text(json.dumps({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": len(VOCAB), "hidden_size": 8,
    "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1,
    "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0}))
converted = subprocess.run([sys.executable, str(source_dir / "convert_hf_to_gguf.py"), str(folder), "--vocab-only",
                            "--outfile", str(out)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(source_dir / "gguf-py")})
if converted.returncode != 0:
    print("the converter refused the tokenizer.json (the fixed behaviour, or another failure):\n"
          + converted.stderr[-1500:])
    sys.exit(0)
print("converted without a word about the pre-tokenizer" if "pre_tokenizer" not in converted.stderr
      else "the converter mentions the pre-tokenizer")
differing = 0
for text, expected in REFERENCE.items():
    tokenized = subprocess.run([tokenize_tool, "-m", str(out), "-p", text, "--ids", "--no-bos", "--log-disable"],
                               capture_output=True, text=True)
    if tokenized.returncode != 0:
        print("llama-tokenize failed (not the bug):\n" + tokenized.stderr[-2000:], file=sys.stderr)
        sys.exit(2)
    actual = json.loads(tokenized.stdout.strip().splitlines()[-1])
    differing += actual != expected
    print(f"{text!r}: tokenizers {expected}, llama.cpp {actual}")
sys.exit(1 if differing else 0)
