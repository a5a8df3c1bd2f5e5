"""llama-cpp-python: a byte that is not UTF-8 is dropped from the text it returns but kept in the
bytes it matches stop strings against, so a stop string the returned text holds is never met: the
answer to a request with stop ["ab"] can be "ab", finish_reason "length" (textbound's field run of
llama-cpp-python's server: `stops/server/text: keeps part of a stop string`, the tiny sentencepiece
model sampling "蚵", <0xD0>, "ー": the answer shows "…w11蚵ーצ…", stops ["1蚵ー", "ーצ"] cut at "ーצ").

Where (llama_cpp/llama.py, llama-cpp-python 0.3.36, `Llama._create_completion`): stops are encoded
to bytes (line 1361) and searched in the detokenized bytes of the completion (lines 1419, 1434-1437),
but the text returned is those bytes decoded with `errors="ignore"` (line 1720), which drops the
bytes the stop search still sees. A stream holds every token after such a byte (lines 1541-1553 find
no prefix that decodes) and flushes them at the end one token at a time, each decoded alone with
`errors="ignore"` (lines 1683-1685): a character spelled over several byte tokens after it is
dropped from the stream though the whole answer keeps it.

Usage: python llama_cpp_python_stop_across_dropped_byte.py MODEL_GGUF
  MODEL_GGUF: a GGUF whose vocabulary has a token of one byte that begins a UTF-8 character (a
  byte-fallback <0xD0> of SentencePiece, or a byte-level BPE's base token), e.g. the field run's
  tiny sentencepiece or qwen3 model. The script has the model write a character, that byte and
  another character (a logits processor leaves the model one token at each step: which tokens are
  sampled is not what is under test), then asks again with the two characters as a stop string,
  through `Llama.create_completion` with the prompt as ids, as the server's chat handler calls it;
  then has it write a character, that byte and "é" as two byte tokens, streamed and not. Exits 1
  while a returned text holds the stop string or the stream drops the "é", 0 once neither, 2 when
  the vocabulary has no such tokens.

The reference: tokenizers' decode of the same ids shows the byte as U+FFFD (and so does llama.cpp's
own llama-server), so the text holds no stop string and running on is right; or, with the byte
dropped from the text, the stop is met there. Either way the OpenAI API's `stop` contract holds:
the returned text does not contain a stop sequence.
"""
import sys

import numpy as np
from llama_cpp import Llama, LogitsProcessorList

PROMPT = b"Once upon a time"
LEAD_BYTES = range(0xC2, 0xE0)  # a byte that begins a two-byte character; alone it is not UTF-8
CHARACTERS = b"abcdefghijklmnopqrstuvwxyz0123456789"
SPELLED = "é".encode("utf-8")  # written as one byte token per byte


def one_byte_tokens(llama: Llama) -> dict[bytes, int]:
    """Per single-byte piece, the first token whose whole text it is."""
    found: dict[bytes, int] = {}
    for token in range(llama.n_vocab()):
        piece = llama.detokenize([token])
        if len(piece) == 1:
            found.setdefault(piece, token)
    return found


def forcing(prompt_length: int, tokens: list[int]) -> LogitsProcessorList:
    """A logits processor leaving the model only ``tokens[k]`` at the k-th step of a completion."""
    def only_next(input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        step = min(len(input_ids) - prompt_length, len(tokens) - 1)
        forced = np.full_like(scores, -np.inf)
        forced[tokens[step]] = 0.0
        return forced
    return LogitsProcessorList([only_next])


def answer(llama: Llama, prompt: list[int], tokens: list[int], stream: bool, stop: list[str]) -> tuple[str, str]:
    """The returned text and finish_reason of a completion of ``tokens``, streamed or whole."""
    request = dict(max_tokens=len(tokens), temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                   stop=stop, logits_processor=forcing(len(prompt), tokens), stream=stream)
    if not stream:
        choice = llama.create_completion(prompt, **request)["choices"][0]
        return choice["text"], choice["finish_reason"]
    chunks = [chunk["choices"][0] for chunk in llama.create_completion(prompt, **request)]
    return "".join(chunk["text"] for chunk in chunks), chunks[-1]["finish_reason"]


def main(model_path: str) -> int:
    llama = Llama(model_path=model_path, n_ctx=512, n_threads=1, verbose=False)
    pieces = one_byte_tokens(llama)
    lead = next((bytes([byte]) for byte in LEAD_BYTES if bytes([byte]) in pieces), None)
    letters = [bytes([byte]) for byte in CHARACTERS if bytes([byte]) in pieces][:2]
    if lead is None or len(letters) < 2 or any(bytes([byte]) not in pieces for byte in SPELLED):
        print("no token of one lead byte, fewer than two one-character tokens, or no byte token of é's bytes,"
              " in this vocabulary", file=sys.stderr)
        return 2
    prompt = llama.tokenize(PROMPT, add_bos=True, special=True)

    tokens = [pieces[letters[0]], pieces[lead], pieces[letters[1]]]
    stop = (letters[0] + letters[1]).decode("ascii")
    generated = llama.detokenize(tokens)
    print(f"completion bytes  {generated!r} (tokens {tokens})\n"
          f"reference text    {generated.decode('utf-8', errors='replace')!r}\nstop              {[stop]!r}")
    held = False
    for stream in (False, True):
        text, finish = answer(llama, prompt, tokens, stream, [stop])
        held |= stop in text
        print(f"{'streamed' if stream else 'whole':<17} {text!r}, finish_reason {finish!r}"
              f"{'  <- holds the stop string' if stop in text else ''}")

    tokens = [pieces[letters[0]], pieces[lead], *(pieces[bytes([byte])] for byte in SPELLED)]
    generated = llama.detokenize(tokens)
    whole, streamed = (answer(llama, prompt, tokens, stream, [])[0] for stream in (False, True))
    print(f"\ncompletion bytes  {generated!r} (tokens {tokens})\n"
          f"reference text    {generated.decode('utf-8', errors='replace')!r}\n"
          f"whole             {whole!r}\nstreamed          {streamed!r}{'  <- differs' if streamed != whole else ''}")
    return 1 if held or streamed != whole else 0

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
