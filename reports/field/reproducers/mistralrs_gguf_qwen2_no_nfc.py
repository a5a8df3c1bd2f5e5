"""mistral.rs tokenizes text with a Qwen2-family GGUF (`tokenizer.ggml.pre = qwen2`: Qwen2, Qwen2.5,
Qwen3, DeepSeek-R1-Distill-Qwen) without the NFC normalization those models' tokenizer.json applies
first: a CJK compatibility ideograph such as U+F9D8 is encoded as its own bytes where transformers
encodes U+5F8B, the character NFC maps it to, so the /tokenize endpoint and every prompt holding such
a character reach the model as other ids than transformers gives.

Needs: mistralrs (0.9.5 from PyPI) and gguf; a GGUF whose pre-tokenizer is `qwen2` as the first
argument (textbound's tiny Qwen3 model:
`python mistralrs_gguf_qwen2_no_nfc.py ~/.cache/textbound/llama_cpp/tiny/qwen3-*/model.gguf`; any
Qwen2.5 or Qwen3 GGUF does). The reference: the model's tokenizer.json, whose normalizer is
`{"type": "NFC"}`, so the ids of a text are the ids of its NFC form. Exits 1 while the bug is there,
0 once it is fixed.

The code: mistralrs-core/src/gguf/gguf_tokenizer.rs at commit 9e922623f, `bpe_pre_tokenizer_spec`:
the `"qwen2" | "deepseek-r1-qwen"` profile (line 327) has `normalize_nfc: false` (line 331), where the
`"qwen35"` one (line 333) has `true` (line 337); `bpe_tokenizer` adds the NFC normalizer only when it
is set (line 474).
"""
import sys
import unicodedata
from pathlib import Path

import gguf
import mistralrs

TEXTS = ("\uf9d8", "\u5f8b", "e\u0301")  # U+F9D8 (NFC: U+5F8B), U+5F8B itself, e + combining acute (NFC: U+00E9)

path = Path(sys.argv[1])
pre = bytes(gguf.GGUFReader(str(path)).fields["tokenizer.ggml.pre"].parts[-1]).decode()
assert pre in ("qwen2", "deepseek-r1-qwen"), f"{path}: pre-tokenizer {pre!r}: not the case shown here"

runner = mistralrs.Runner(which=mistralrs.Which.GGUF(quantized_model_id=str(path.parent), quantized_filename=path.name),
                          no_paged_attn=True)
differ = 0
for text in TEXTS:
    expected = runner.tokenize_text(unicodedata.normalize("NFC", text), False, None)
    actual = runner.tokenize_text(text, False, None)
    differ += actual != expected
    print(f"tokenize_text({text!r}): expected {expected} (the ids of its NFC form), actual {actual}")
sys.exit(1 if differ else 0)
