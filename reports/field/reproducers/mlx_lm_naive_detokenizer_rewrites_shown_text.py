"""mlx-lm's NaiveStreamingDetokenizer (the one tokenizer_utils.load picks for every tokenizer whose
decoder is neither the SentencePiece sequence nor ByteLevel: Metaspace, WordPiece...) decodes the
ids since the last newline again at each step and hands out ``text[offset:]``. Where decoding more
ids changes text it has already handed out, the stream goes wrong: a Metaspace decoder strips the
first space of what it decodes, so the first space of every line after the first is lost
("x\\n    y" streams as "x\\n   y": indentation shrinks by one). (textbound's field run also saw the
other ways: a byte-fallback run that turns invalid shrinks the text, after which characters are
handed out twice; WordPiece clean-up rewrites shown text.) This script shows the first.

The detokenizer is driven as mlx_lm.server's batch loop drives it (ResponseGenerator._generate):
the wrapper's ``detokenizer`` property, per generated id ``add_token`` then ``last_segment``,
``finalize`` and ``last_segment`` at the end.

Needs: mlx-lm 0.32.2 (on Linux: pip install 'mlx-lm[cpu]==0.32.2'); the tokenizers are written here
with tokenizers (no download). Runs in an empty folder; exits 1 while the bug is there.

Expected: tokenizer.decode of the same ids (transformers, the reference textbound's oracle is).
"""
import json
import sys
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from mlx_lm.tokenizer_utils import NaiveStreamingDetokenizer
from mlx_lm.utils import load_tokenizer


def metaspace_tokenizer():
    """Characters as tokens, the Metaspace pre-tokenizer and decoder (prepend_scheme "first")."""
    folder = Path(tempfile.mkdtemp())
    chars = sorted(set("\u2581\nxyabc"))
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(chars)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
    return load_tokenizer(folder)  # what mlx_lm.server's ModelProvider loads


def streamed(tokenizer, ids):
    detokenizer = tokenizer.detokenizer
    assert isinstance(detokenizer, NaiveStreamingDetokenizer)
    shown = ""
    for token in ids:
        detokenizer.add_token(token)
        shown += detokenizer.last_segment
    detokenizer.finalize()
    return shown + detokenizer.last_segment


tokenizer = metaspace_tokenizer()
failed = False
for text in ("x\n    y", "a\n b c"):
    ids = tokenizer.encode(text, add_special_tokens=False)
    expected, actual = tokenizer.decode(ids), streamed(tokenizer, ids)
    print(f"ids of {text!r}: expected {expected!r} (tokenizer.decode), actual {actual!r} (streamed)")
    failed |= actual != expected
sys.exit(1 if failed else 0)
