"""mlx-lm's BPEStreamingDetokenizer (the one tokenizer_utils.load picks for every tokenizer whose
decoder is ByteLevel: Llama 3, Qwen, GPT-2...) drops the leading space of the first generated
token: the ids of " Paris" stream as "Paris", though tokenizer.decode gives " Paris" and
StreamingDetokenizer's own docstring says detokenizer.text should match
tokenizer.decode(detokenizer.tokens). A text completion ("The capital of France is" -> " Paris")
served by mlx_lm.server reads "The capital of France isParis".

The detokenizer is driven as mlx_lm.server's batch loop drives it (ResponseGenerator._generate):
the wrapper's ``detokenizer`` property (a fresh copy per request), per generated id ``add_token``
then ``last_segment``, and ``finalize`` then ``last_segment`` at a length finish.

Needs: mlx-lm 0.32.2 (on Linux: pip install 'mlx-lm[cpu]==0.32.2'); the tokenizer is a byte-level
BPE written here with tokenizers (no download). Runs in an empty folder; exits 1 while the bug is there.

Expected: tokenizer.decode of the same ids (transformers, the reference textbound's oracle is).
"""
import json
import sys
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from mlx_lm.tokenizer_utils import BPEStreamingDetokenizer
from mlx_lm.utils import load_tokenizer

folder = Path(tempfile.mkdtemp())
byte_level = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))},
                                  merges=[]))
byte_level.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
byte_level.decoder = decoders.ByteLevel()
byte_level.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))

tokenizer = load_tokenizer(folder)  # what mlx_lm.server's ModelProvider loads (utils.load -> load_tokenizer)
assert isinstance(tokenizer.detokenizer, BPEStreamingDetokenizer)

failed = False
for generated in (" Paris", "  indented code", " a b"):
    ids = tokenizer.encode(generated, add_special_tokens=False)
    detokenizer = tokenizer.detokenizer
    shown = ""
    for token in ids:
        detokenizer.add_token(token)
        shown += detokenizer.last_segment
    detokenizer.finalize()
    shown += detokenizer.last_segment
    expected = tokenizer.decode(ids)
    print(f"ids of {generated!r}: expected {expected!r} (tokenizer.decode), actual {shown!r} (streamed)")
    failed |= shown != expected
sys.exit(1 if failed else 0)
