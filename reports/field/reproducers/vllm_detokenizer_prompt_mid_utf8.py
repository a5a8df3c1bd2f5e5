"""vLLM's v1 fast detokenizer streams the whole prompt's text when the prompt ends mid-UTF-8 (reported:
vllm-project/vllm#48853, fix pull request #48854, both open when this was written).

The detokenizer is made as the server makes it for each request: the output processor's
``IncrementalDetokenizer.from_new_request(tokenizer, request)`` (vllm/v1/engine/detokenizer.py),
which picks FastIncrementalDetokenizer for a TokenizersBackend tokenizer; each step is
``update(new_ids, stop_terminated=False)`` then ``get_next_output_text(finished, delta=True)``, as
``RequestState.make_request_output`` reads it. So a fix anywhere on that path (#48854 changes
from_new_request) makes this exit 0.

Needs: vllm (0.33.0; runs on the CPU) and tokenizers. Runs in an empty folder (it writes a tiny
byte-level tokenizer, one token per byte, to a temporary folder); exits 1 while the bug is there.

The reference: a request's output text is what its output ids add to the prompt's decode; the
prompt's own text is never part of it.
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
from vllm.v1.engine.detokenizer import IncrementalDetokenizer

folder = Path(tempfile.mkdtemp())
alphabet = pre_tokenizers.ByteLevel.alphabet()  # the 256 byte-level characters
source = tokenizers.Tokenizer(models.BPE({c: i for i, c in enumerate(sorted(alphabet))}, []))
source.pre_tokenizer, source.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
source.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
tokenizer = get_tokenizer(str(folder))

prompt = tokenizer.encode("Hi €", add_special_tokens=False)[:-1]  # ends with two of the euro sign's three bytes
output = tokenizer.encode("€!", add_special_tokens=False)[2:]  # its third byte, then "!"
request = SimpleNamespace(request_id="r", sampling_params=SamplingParams(), prompt_token_ids=prompt,
                          prompt_embeds=None)
detokenizer = IncrementalDetokenizer.from_new_request(tokenizer, request)
print("detokenizer:", type(detokenizer).__name__)
streamed = ""
for index, token in enumerate(output):
    detokenizer.update([token], stop_terminated=False)
    streamed += detokenizer.get_next_output_text(finished=index == len(output) - 1, delta=True)

# Whether the completed character counts as output text ("€!") or the prompt's ("!") is a policy;
# the prompt's complete text "Hi " is never output (tokenizers: prompt + output decode to "Hi €!").
print("expected: the output's text without the prompt's 'Hi ' ('€!' or '!'); tokenizers' decode of prompt + output:",
      repr(tokenizer.decode(prompt + output)))
print("actual:  ", repr(streamed))
sys.exit(1 if streamed.startswith("Hi") else 0)
