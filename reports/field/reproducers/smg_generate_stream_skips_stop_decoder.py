"""smg (SGLang's model gateway): a streamed native `/generate` in gRPC mode neither applies the
request's stop strings nor its `skip_special_tokens`, nor decodes the generated ids as a sequence:
the router strips the stop strings from what it sends an SGLang worker (it owns string stops
there), but its streaming generate path never runs them; it decodes each chunk's ids alone with the
special tokens skipped, so a character split across two tokens is shown as two U+FFFD and a special
token asked for is dropped. The same request not streamed is answered as expected (textbound's
field run of smg: `stops/server/missed a stop`, `stops/server/text: keeps the stop string`, e.g.
qwen3's stop ["Q"] on " tamQUARE_PRI ...", streamed on to max_tokens; llama3_1's
`detokenizer/server_specials/shown text the decode changes: drops text`, <|reserved_special_token_147|>).

Where (smg 1.13.0, model_gateway/src/routers/grpc/): common/stages/helpers.rs 696-709
(`resolve_string_stops`: an SGLang request's `stop` is taken out, single-token stops kept as
`stop_token_ids`, "the router-side decoder handles the rest") and regular/streaming.rs 1413-1548
(`process_generate_streaming`: no StopSequenceDecoder; 1454-1457 `tokenizer.decode(chunk.token_ids(),
true)` per chunk, appended), where regular/processor.rs 646-700 (the non-streamed generate) runs the
request's StopSequenceDecoder (its stops and skip_special_tokens) over all the ids.

Usage: python smg_generate_stream_skips_stop_decoder.py TOKENIZER_DIR
  TOKENIZER_DIR: a byte-level BPE or byte-fallback tokenizer folder (tokenizer.json,
  tokenizer_config.json; Qwen3's, Llama 2's: there each chunk decoded alone also loses its word's
  leading space).
  Needs: pip install smg==1.13.0 smg-grpc-proto==0.4.27 tokenizers. The script serves an SGLang
  scheduler of its own (gRPC, 127.0.0.1) that answers every request with the same ids, starts the
  router before it as `python -m smg.launch_router` does, and asks POST /generate streamed and not.
  Exits 1 while the streamed answers differ from the reference, 0 once they agree.

The reference: SGLang's /generate (and the OpenAI API's `stop`): the text ends before the first
stop string, without it; the text shown is the decode of the generated ids (tokenizers), with the
special tokens skipped or kept as `skip_special_tokens` asks.
"""
import json
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent import futures

import grpc
from smg_grpc_proto.generated import sglang_scheduler_pb2 as pb
from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pb_grpc
from tokenizers import Tokenizer

TEXT, STOP = " alpha beta gamma delta", "beta"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FixedScheduler(pb_grpc.SglangSchedulerServicer):
    """An SGLang scheduler answering every Generate with ``ids``, one per streamed chunk."""

    def __init__(self, ids, vocab_size):
        self.ids, self.vocab_size = ids, vocab_size

    def Generate(self, request, context):
        if request.stream:
            for n, token in enumerate(self.ids, 1):
                yield pb.GenerateResponse(request_id=request.request_id, chunk=pb.GenerateStreamChunk(
                    token_ids=[token], prompt_tokens=1, completion_tokens=n))
        yield pb.GenerateResponse(request_id=request.request_id, complete=pb.GenerateComplete(
            output_ids=[] if request.stream else self.ids, finish_reason="length", prompt_tokens=1,
            completion_tokens=len(self.ids)))

    def HealthCheck(self, request, context):
        return pb.HealthCheckResponse(healthy=True)

    def GetModelInfo(self, request, context):
        return pb.GetModelInfoResponse(served_model_name="m", is_generation=True, max_context_length=4096,
                                       vocab_size=self.vocab_size, max_req_input_len=4096)

    def GetServerInfo(self, request, context):
        return pb.GetServerInfoResponse(server_type="grpc")

    def GetLoads(self, request, context):
        return pb.GetLoadsResponse(dp_rank_count=1, loads=[pb.SchedulerLoad(dp_rank=0)])


def generate(url: str, stream: bool, stop=None, skip_special_tokens=True) -> str:
    sampling = {"max_new_tokens": 16, "skip_special_tokens": skip_special_tokens, **({"stop": [stop]} if stop else {})}
    body = json.dumps({"model": "m", "input_ids": [1], "stream": stream, "sampling_params": sampling}).encode()
    request = urllib.request.Request(url + "/generate", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        if not stream:
            return json.load(answer)[0]["text"]
        text = ""
        for line in answer.read().decode().splitlines():
            if line.startswith("data: {"):
                text = json.loads(line[6:])["text"]  # each event's text is the whole text so far
        return text


def main(tokenizer_dir: str) -> int:
    tokenizer = Tokenizer.from_file(f"{tokenizer_dir}/tokenizer.json")
    # the bytes C3 A9 of "é", one token each: byte-fallback tokens, else byte-level BPE's
    split = [tokenizer.token_to_id(f"<0x{byte:02X}>") for byte in b"\xc3\xa9"]
    if None in split:
        split = [tokenizer.token_to_id("Ã"), tokenizer.token_to_id("©")]
    special = next(i for i, added in sorted(tokenizer.get_added_tokens_decoder().items()) if added.special)
    ids = tokenizer.encode(TEXT, add_special_tokens=False).ids + [special] + split
    shown, kept = tokenizer.decode(ids, skip_special_tokens=True), tokenizer.decode(ids, skip_special_tokens=False)
    worker = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_SglangSchedulerServicer_to_server(FixedScheduler(ids, tokenizer.get_vocab_size()), worker)
    worker_port = worker.add_insecure_port(f"127.0.0.1:{free_port()}")
    worker.start()
    port = free_port()
    router = subprocess.Popen([sys.executable, "-m", "smg.launch_router", "--host", "127.0.0.1", "--port", str(port),
                               "--worker-urls", f"grpc://127.0.0.1:{worker_port}", "--model-path", tokenizer_dir,
                               "--tokenizer-path", tokenizer_dir, "--prometheus-host", "127.0.0.1",
                               "--prometheus-port", str(free_port())],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):  # ready once it generates: it lists the model before its worker is routable
            try:
                generate(url, False)
                break
            except OSError:
                time.sleep(0.5)
        failed = False
        for case, stop, skip, expected in (("no stop", None, True, shown),
                                           (f"stop {STOP!r}", STOP, True, shown[:shown.index(STOP)]),
                                           ("skip_special_tokens false", None, False, kept)):
            streamed, not_streamed = generate(url, True, stop, skip), generate(url, False, stop, skip)
            print(f"{case}:\n  expected      {expected!r}\n  not streamed  {not_streamed!r}\n"
                  f"  streamed      {streamed!r}")
            failed |= streamed != expected
        return 1 if failed else 0
    finally:
        router.terminate()
        router.wait()
        worker.stop(grace=None)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
