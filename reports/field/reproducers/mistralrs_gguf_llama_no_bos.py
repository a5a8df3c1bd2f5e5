"""mistral.rs tokenizes a GGUF without its BOS even when the file says `tokenizer.ggml.add_bos_token =
true` and add_special_tokens is asked, for both tokenizer models a Llama GGUF has: `llama`
(SentencePiece-style: Llama 2, Mistral) and `gpt2` (BPE: Llama 3, 3.1). The /tokenize endpoint, and
completion prompts (encoded with add_special_tokens=true), lack the BOS llama.cpp and transformers
put first.

Needs: mistralrs (0.9.5 from PyPI) and gguf (to read the file's flag); a GGUF with a `llama` or `gpt2`
tokenizer and add_bos_token true, as the first argument (textbound's tiny models:
`python mistralrs_gguf_llama_no_bos.py ~/.cache/textbound/llama_cpp/tiny/llama2-*/model.gguf`, or
`.../tiny/llama3_1-*/model.gguf`; any Llama 2, Mistral 7B or Llama 3 GGUF does). Exits 1 while the
bug is there, 0 once it is fixed.

The code: mistralrs-core/src/gguf/gguf_tokenizer.rs at commit 9e922623f. `unigram_tokenizer` (line
402) builds the Unigram model, normalizer and decoder and never reads `p.add_bos`, so the tokenizer
has no post-processor; `bpe_tokenizer` (line 451) gives it ByteLevel's post-processor (line 503),
which adds nothing, and never reads `p.add_bos` either. Only `gemma4_tokenizer` (line 589) turns
add_bos into a TemplateProcessing. The engine's `tokenize_text` (engine/add_request.rs line 968) is
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
assert model in ("llama", "gpt2") and add_bos, \
    f"{path}: tokenizer model {model!r}, add_bos_token {add_bos}: not the case shown here"

runner = mistralrs.Runner(which=mistralrs.Which.GGUF(quantized_model_id=str(path.parent), quantized_filename=path.name),
                          no_paged_attn=True)
ids = runner.tokenize_text("Hello world", True, None)
print(f"expected: ids starting with the BOS id {bos} (the file's add_bos_token is true)")
print("actual:  ", ids)
sys.exit(0 if ids[:1] == [bos] else 1)
