"""llama.cpp's converter does not carry a tokenizer.json post-processor that adds no BOS into the
GGUF: for a Llama model given as tokenizer.json (no tokenizer.model) whose TemplateProcessing is
`single: [$A]`, convert_hf_to_gguf.py writes no tokenizer.ggml.add_bos_token, and llama.cpp's
SentencePiece vocabulary then adds BOS by its own default, where tokenizers adds nothing
(textbound's field run of llama-cpp-python: `tokenizer/encode/ids: adds an added token at the
start`, e.g. on mistral-common's v1 vocabulary as tokenizer.json: ' ' -> [<s>, ▁▁], tokenizers [▁▁]).

Where: gguf-py/gguf/vocab.py, SpecialVocab._try_load_from_tokenizer_json: TemplateProcessing is
read only `if len(tmpl_single) > 1`, so a template without special tokens leaves add_special_token
unset; tokenizer_config.json's add_bos_token is the only other source. src/llama-vocab.cpp: for
LLAMA_VOCAB_TYPE_SPM add_bos defaults to true unless the GGUF key says otherwise.

Needs: llama.cpp's source (its convert_hf_to_gguf.py, conversion/ and gguf-py; path in $LLAMA_CPP),
its llama-tokenize tool ($LLAMA_TOKENIZE; `cmake --build build --target llama-tokenize`), and the
converter's imports (torch, transformers, with tokenizers). Runs in an empty folder; exits 1 while
the bug is there, 0 once fixed, 2 when the converter or llama-tokenize fails (not the bug).

The reference's ids: tokenizers 0.23.3 on this tokenizer.json, `Tokenizer.encode(text).ids`
(add_special_tokens true), as recorded when this was written: the post-processor adds nothing.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

source_dir, tokenize_tool = Path(os.environ["LLAMA_CPP"]), os.environ["LLAMA_TOKENIZE"]
sys.path.insert(0, str(source_dir / "gguf-py"))
import gguf  # noqa: E402 - llama.cpp's own gguf-py, as the converter uses it

VOCAB = {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "▁a": 5}
SPECIAL = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True} for c, i in list(VOCAB.items())[:3]]
TOKENIZER = {  # a Llama-style byte-fallback BPE whose post-processor adds no special token
    "version": "1.0", "truncation": None, "padding": None, "added_tokens": SPECIAL, "normalizer": None,
    "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False},
    "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                       "special_tokens": {}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                                 {"type": "ByteFallback"}, {"type": "Fuse"},
                                                 {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
              "vocab": VOCAB, "merges": [["▁", "a"]]}}
TEXT, REFERENCE = "a", [5]  # tokenizers: '▁a', no <s>

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
    print("the converter failed (not the bug):\n" + converted.stderr[-2000:], file=sys.stderr)
    sys.exit(2)
field = gguf.GGUFReader(str(out)).fields.get("tokenizer.ggml.add_bos_token")
print("tokenizer.ggml.add_bos_token:", "absent" if field is None else bool(field.parts[field.data[0]][0]))
tokenized = subprocess.run([tokenize_tool, "-m", str(out), "-p", TEXT, "--ids", "--log-disable"],
                           capture_output=True, text=True)
if tokenized.returncode != 0:
    print("llama-tokenize failed (not the bug):\n" + tokenized.stderr[-2000:], file=sys.stderr)
    sys.exit(2)
actual = json.loads(tokenized.stdout.strip().splitlines()[-1])
print(f"{TEXT!r}: tokenizers {REFERENCE}, llama.cpp {actual}")
sys.exit(0 if actual == REFERENCE else 1)
