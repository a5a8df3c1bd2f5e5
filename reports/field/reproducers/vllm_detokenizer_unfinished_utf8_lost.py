"""vLLM's v1 fast detokenizer loses the text of the last tokens of a finished request when they never
complete a UTF-8 character: the whole decode of the output ends in U+FFFD, vLLM's text has nothing.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer, one token per byte, to a temporary folder); exits 1 while the bug is there.

The reference: tokenizers' decode of the request's output ids, which is what vLLM's own
non-incremental decode of the same ids gives, and what a stop string "\ufffd" would be matched on.
"""
import json
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import tokenizers
from tokenizers import decoders, models, pre_tokenizers
from vllm.sampling_params import SamplingParams
from vllm.tokenizers import get_tokenizer
from vllm.v1.engine.detokenizer import FastIncrementalDetokenizer

folder = Path(tempfile.mkdtemp())
alphabet = pre_tokenizers.ByteLevel.alphabet()  # the 256 byte-level characters
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(sorted(alphabet))}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))

prompt = tokenizer.encode("Hi", add_special_tokens=False)
output = tokenizer.encode("a€", add_special_tokens=False)[:-1]  # "a", then two of the euro sign's three bytes
request = SimpleNamespace(request_id="r", sampling_params=SamplingParams(), prompt_token_ids=prompt,
                          prompt_embeds=None)
detokenizer = FastIncrementalDetokenizer(tokenizer, request)
streamed = ""
for index, token in enumerate(output):
    detokenizer.update([token], stop_terminated=False)
    streamed += detokenizer.get_next_output_text(finished=index == len(output) - 1, delta=True)

expected = tokenizer.decode(output)
print("expected:", repr(expected))
print("actual:  ", repr(streamed), "(output_text:", repr(detokenizer.output_text) + ")")
sys.exit(1 if streamed != expected else 0)
