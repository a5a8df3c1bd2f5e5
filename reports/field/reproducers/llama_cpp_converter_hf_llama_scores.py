"""llama.cpp's converter (gguf-py's LlamaHfVocab, used by convert_hf_to_gguf.py for a Llama model that
ships tokenizer.json but no tokenizer.model) writes the placeholder score -1000 for every token, so
the merge order of the BPE is lost; llama.cpp's SentencePiece tokenizer (LLAMA_VOCAB_TYPE_SPM) then
merges by score, with every score equal, and tokenizes differently from the model's tokenizer
(textbound's field run: ' p' -> '▁▁ p' on the shared llama2 folder).

Needs: gguf (gguf-py as llama.cpp ships it: 0.19.0 here, the llama-cpp-python 0.3.36 sdist's copy
behaves the same) and tokenizers. Runs in an empty folder; exits 1 while the bug is there.
This shows the converter's half; llama.cpp's SPM tokenizer reading tokenizer.ggml.scores is the other.

The reference: the tokenizer.json's BPE merges rank the merged tokens (merge 0 first); a score list
that keeps that order (for example -rank, as SentencePiece's own scores rank pieces) lets a
score-driven merger reproduce it. All-equal scores cannot.
"""
import json
import sys
import tempfile
from pathlib import Path

from gguf.vocab import LlamaHfVocab
from tokenizers import Tokenizer, decoders, models, normalizers

folder = Path(tempfile.mkdtemp())
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "p": 4, "a": 5, "▁p": 6, "pa": 7, "▁pa": 8}
merges = [("▁", "p"), ("p", "a"), ("▁p", "a")]  # rank 0, 1, 2: '▁p' before 'pa'
source = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
source.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
source.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}))

scores = {text.decode(): score for text, score, _ in LlamaHfVocab(folder).all_tokens()}
merged = [a + b for a, b in merges]
print("merge order of the merged tokens:", merged)
print("their scores in the GGUF:        ", [scores[token] for token in merged])
ordered = all(scores[merged[i]] > scores[merged[i + 1]] for i in range(len(merged) - 1))
print("expected: scores that rank them as the merges do; actual:",
      "ranked" if ordered else f"all {sorted(set(scores.values()))}")
sys.exit(0 if ordered else 1)
