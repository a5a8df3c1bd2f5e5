"""mistral.rs drops a GGUF's user-defined tokens (`tokenizer.ggml.token_type` 4) from a decode with
skip_special_tokens, as if they were control tokens: Qwen3's `<think>`, `</think>`, `<tool_call>`,
`<tool_response>` (added tokens its tokenizer.json declares `"special": false`) vanish from the
/detokenize endpoint's text and from any output decoded skipping specials. transformers keeps them
(tokenizers skips only special added tokens), and so does llama.cpp on the same file
(`token_to_piece` in src/llama-vocab.cpp copies a USER_DEFINED token's text whatever `special`
says).

Needs: mistralrs (0.9.5 from PyPI) and gguf (to read the token types); a GGUF with user-defined tokens
as the first argument (textbound's tiny Qwen3 model:
`python mistralrs_gguf_user_defined_skipped.py ~/.cache/textbound/llama_cpp/tiny/qwen3-*/model.gguf`;
any Qwen3 GGUF does). Exits 1 while the bug is there, 0 once it is fixed.

The code: mistralrs-core/src/gguf/gguf_tokenizer.rs at commit 9e922623f,
`convert_gguf_metadata_to_hf_tokenizer` (lines 233-239): every token whose type is neither NORMAL (1)
nor BYTE (6) is added with `AddedToken::from(token, true)`, i.e. special, so USER_DEFINED (4) tokens
are special too; `Request::Detokenize` decodes with the request's skip_special_tokens.
"""
import sys
from pathlib import Path

import gguf
import mistralrs

USER_DEFINED = 4  # gguf.TokenType.USER_DEFINED

path = Path(sys.argv[1])
fields = gguf.GGUFReader(str(path)).fields
types = [int(fields["tokenizer.ggml.token_type"].parts[index][0]) for index in fields["tokenizer.ggml.token_type"].data]
tokens = fields["tokenizer.ggml.tokens"]
user_defined = {i: bytes(tokens.parts[tokens.data[i]]).decode("utf-8") for i, kind in enumerate(types) if kind == USER_DEFINED}
assert user_defined, f"{path}: no user-defined token: not the case shown here"

runner = mistralrs.Runner(which=mistralrs.Which.GGUF(quantized_model_id=str(path.parent), quantized_filename=path.name),
                          no_paged_attn=True)
dropped = 0
for token_id, text in sorted(user_defined.items()):
    decoded = runner.detokenize_text([token_id], True)
    dropped += decoded != text
    print(f"detokenize_text([{token_id}], skip_special_tokens=True): expected {text!r}, actual {decoded!r}")
sys.exit(1 if dropped else 0)
