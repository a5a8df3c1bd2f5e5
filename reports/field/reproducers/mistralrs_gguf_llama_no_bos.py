"""mistral.rs tokenizes a `llama`-model GGUF (Llama 2, Mistral, and every SentencePiece-style GGUF)
without its BOS even when the file says `tokenizer.ggml.add_bos_token = true` and
add_special_tokens is asked: the /tokenize endpoint, and completion prompts (encoded with
add_special_tokens=true), lack the BOS llama.cpp and transformers put first.

Needs: mistralrs (0.9.5 from PyPI) and gguf (to read the file's flag); a GGUF with a `llama`
tokenizer and add_bos_token true, as the first argument (textbound's tiny Llama 2 model:
`python mistralrs_gguf_llama_no_bos.py ~/.cache/textbound/llama_cpp/tiny/llama2-*/model.gguf`; any
Llama 2 or Mistral 7B GGUF does). Exits 1 while the bug is there, 0 once it is fixed.

The code: mistralrs-core/src/gguf/gguf_tokenizer.rs, `unigram_tokenizer` (line 402 at commit
9e922623f): it builds the Unigram model, normalizer and decoder and never reads `p.add_bos`, so the
tokenizer has no post-processor; only `gemma4_tokenizer` (line 589) turns add_bos into a
TemplateProcessing. The engine's `tokenize_text` (engine/add_request.rs line 968) is
`tokenizer.encode_fast(text, add_special_tokens)`.
"""
import sys
from pathlib import Path

import gguf
import mistralrs

path = Path(sys.argv[1])
fields = gguf.GGUFReader(str(path)).fields
model = bytes(fields["tokenizer.ggml.model"].parts[-1]).decode()
add_bos = bool(fields["tokenizer.ggml.add_bos_token"].parts[-1][0])
bos = int(fields["tokenizer.ggml.bos_token_id"].parts[-1][0])
assert model == "llama" and add_bos, f"{path}: tokenizer model {model!r}, add_bos_token {add_bos}: not the case shown here"

runner = mistralrs.Runner(which=mistralrs.Which.GGUF(quantized_model_id=str(path.parent), quantized_filename=path.name),
                          no_paged_attn=True)
ids = runner.tokenize_text("Hello world", True, None)
print(f"expected: ids starting with the BOS id {bos} (the file's add_bos_token is true)")
print("actual:  ", ids)
sys.exit(0 if ids[:1] == [bos] else 1)
