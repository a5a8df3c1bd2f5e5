"""llama-cpp-python: when one sampled token completes two stop strings, a streamed completion cuts
the text at the earliest-starting one, a non-streamed completion at the first of the request's
`stop` list that occurs: the same seeded request answers different text streamed and not
(textbound's field run of llama-cpp-python's server: `stops/server/stopped where the reference
does not`, qwen3's tiny model, streamed " Clemson Sincl" where the whole text is " Clemson Sinclair"
for stops ["ح", "airحص"]).

Where (llama_cpp/llama.py, llama-cpp-python 0.3.36): `Llama._create_completion`, lines 1434-1437
(every token: `any_stop = [s for s in stop_sequences if s in all_text]; first_stop = any_stop[0];
text = all_text[: all_text.index(first_stop)]`: the request's list order) and, for a stream, lines
1602-1604 (`end = min(remaining_text.index(stop) for stop in any_stop)`: the earliest start).

Usage: python llama_cpp_python_stream_stop_cut.py MODEL_GGUF
  MODEL_GGUF: any GGUF llama-cpp-python can sample from (the field run's tiny qwen3 model). The script
  samples an unstopped completion, picks a token of two or more characters whose text is at position
  p > 0 of the output, and asks again with stops [text[p], text[p-1:p+2]]: both complete on that
  token; the first ends first. Exits 1 while streamed and non-streamed differ, 0 once they agree, 2
  when no such token is found.

The reference: the OpenAI API's `stop` (the returned text stops where a stop sequence first
appears, without it), so streamed and non-streamed agree; both cut at text[:p], before the stop
that ends first.
"""
import sys

from llama_cpp import Llama

SAMPLING = dict(max_tokens=24, seed=7, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0)
PROMPT = "Once upon a time"


def main(model_path: str) -> int:
    llama = Llama(model_path=model_path, n_ctx=512, n_threads=1, verbose=False)
    whole = llama.create_completion(PROMPT, **SAMPLING)["choices"][0]["text"]
    pieces = [piece["choices"][0]["text"] for piece in llama.create_completion(PROMPT, stream=True, **SAMPLING)]
    at = 0
    for piece in pieces:
        p = at
        at += len(piece)
        if len(piece) >= 2 and p >= 1 and whole[p] not in whole[:p] and whole[p - 1:p + 2] not in whole[:p + 1]:
            stops = [whole[p], whole[p - 1:p + 2]]
            break
    else:
        print("no token of two or more characters after the first: try another seed", file=sys.stderr)
        return 2
    not_streamed = llama.create_completion(PROMPT, stop=stops, **SAMPLING)["choices"][0]["text"]
    streamed = "".join(c["choices"][0]["text"] for c in llama.create_completion(PROMPT, stop=stops, stream=True, **SAMPLING))
    print(f"unstopped     {whole!r}\nstops         {stops!r}\nexpected      {whole[:p]!r}\n"
          f"not streamed  {not_streamed!r}\nstreamed      {streamed!r}")
    return 1 if streamed != not_streamed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
