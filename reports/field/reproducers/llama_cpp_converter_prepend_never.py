"""llama.cpp's converter does not carry a Metaspace `prepend_scheme: "never"` into the GGUF: for a Llama
model given as tokenizer.json (no tokenizer.model), convert_hf_to_gguf.py writes
tokenizer.ggml.add_space_prefix only from tokenizer_config.json's add_prefix_space, so the key is
absent and llama.cpp's SentencePiece tokenizer takes its default, true: it prepends "▁" to every
text the tokenizer.json never prefixes (textbound's field run, metaspace_never: '\\ufffd' ->
'▁ <0xEF> <0xBF> <0xBD>', tokenizers '<0xEF> <0xBF> <0xBD>').

Needs: llama.cpp's source (its convert_hf_to_gguf.py, conversion/ and gguf-py; path in $LLAMA_CPP),
torch and transformers (the converter imports them), tokenizers. Runs in an empty folder; exits 1
while the bug is there, 2 when the converter fails (not the bug). llama.cpp's default is in
src/llama-vocab.cpp (LLAMA_VOCAB_TYPE_SPM: add_space_prefix = true, then overridden only by the GGUF key).

The reference: tokenizers' Metaspace with prepend_scheme "never" adds no "▁" before a text.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

source_dir = Path(os.environ["LLAMA_CPP"])
sys.path.insert(0, str(source_dir / "gguf-py"))
import gguf  # noqa: E402 - llama.cpp's own gguf-py, as the converter uses it

folder, out = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp()) / "vocab.gguf"
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "▁a": 5}
tokenizer = Tokenizer(models.BPE(vocab, [("▁", "a")], unk_token="<unk>", byte_fallback=True))
tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")
tokenizer.decoder = decoders.Sequence([decoders.Metaspace(prepend_scheme="never"), decoders.ByteFallback()])
tokenizer.save(str(folder / "tokenizer.json"))
print("tokenizers:", tokenizer.encode("a").tokens, "for 'a' (no '▁' prepended)")
(folder / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}))
(folder / "config.json").write_text(json.dumps({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": len(vocab), "hidden_size": 8,
    "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1,
    "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0}))
converted = subprocess.run([sys.executable, str(source_dir / "convert_hf_to_gguf.py"), str(folder), "--vocab-only",
                "--outfile", str(out)], capture_output=True, text=True, env={**os.environ,
                "PYTHONPATH": str(source_dir / "gguf-py")})
if converted.returncode != 0:
    print("the converter failed (not the bug):\n" + converted.stderr[-2000:], file=sys.stderr)
    sys.exit(2)
reader = gguf.GGUFReader(str(out))
model = reader.fields["tokenizer.ggml.model"]
if bytes(model.parts[model.data[0]]).decode() != "llama":
    print("the converter did not write a SentencePiece ('llama') vocabulary: not the case this shows", file=sys.stderr)
    sys.exit(2)
field = reader.fields.get("tokenizer.ggml.add_space_prefix")
written = None if field is None else bool(field.parts[field.data[0]][0])
print("expected: tokenizer.ggml.add_space_prefix = False (prepend_scheme 'never')")
print("actual:   tokenizer.ggml.add_space_prefix =", "absent (llama.cpp's SPM default: true)" if field is None else written)
sys.exit(0 if written is False else 1)
