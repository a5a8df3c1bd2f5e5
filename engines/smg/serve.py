"""SGLang's model gateway (smg) serving a family's tokenizer and chat template in front of a seeded
random-token gRPC worker, on 127.0.0.1; run by the python of smg's own environment (``smg``,
``smg-grpc-proto``, ``tokenizers``; nox -s server_smg builds it), started and stopped by
textbound.server.launch (tools/serve_engine.py --engine smg).

    python engines/smg/serve.py FAMILY_DIR --port 8000

Server entry point: ``smg launch``'s (``python -m smg.launch_router``)
``launch_router(parse_router_args(argv))``, the router in gRPC mode before a worker at
``grpc://127.0.0.1:PORT`` answering the ``sglang.grpc.scheduler.SglangScheduler`` service.

smg's own text boundary is what answers: in gRPC mode its Rust router (crates/tokenizer,
crates/tool_parser, crates/reasoning_parser) renders the chat template and tokenizes, sends token
ids to the worker, detokenizes the ids the worker streams back, applies stop strings and parses
tool calls and reasoning; its /v1/tokenize and /v1/detokenize answer from the same tokenizer. The
worker is what an SGLang scheduler is to it (``Generate``, ``HealthCheck``, ``GetModelInfo``,
``GetServerInfo``, ``GetLoads``, ``Abort``): it draws ids uniformly from the vocabulary with a
generator seeded by the prompt ids (the router forwards no seed: its SamplingParams has no seed
field), ends at a stop id (``stop_token_ids`` and the model's end-of-sequence ids unless
``ignore_eos``; finish "stop", the id sent and named as ``matched_token_id``) or at
``max_new_tokens`` ("length"), and constrains nothing (a regex, JSON schema or grammar is ignored;
the router sends no logit bias from an OpenAI request, so no steering reaches it). Its output is
noise, as a random-weight model's. One request it answers otherwise: one whose id starts with
PROMPT_IDS_RID (a chat's ``rid``, which the router sends as the request id) gets the prompt ids it
was sent, written out as decimal numbers (the family's tokenizer encodes them), so the smg dialect
can read what the router rendered and tokenized: no route of smg's answers it
(textbound/server/dialects/smg.py, ``chat_ids``).

One process holds the worker (grpcio, in threads) and the router; the router is given the family
folder as its tokenizer and model path, the family's tool-call and reasoning parsers where it has
them and its metrics server on a free port of 127.0.0.1 (by default it binds 0.0.0.0:29000, which
a second router on the machine cannot). It is ready when ``GET /v1/models`` lists MODEL_NAME and
``GET /v1/tokenizers`` names it: the router registers the model's tokenizer in a job of its own.
"""
from __future__ import annotations

import argparse
import json
import random
import socket
from concurrent import futures
from pathlib import Path

from tokenizers import Tokenizer

MODEL_NAME = "m"
CONTEXT = 4096
DEFAULT_MAX_TOKENS = 16  # a request naming none
WORKER_THREADS = 8
# textbound/server/dialects/smg.py's: the requests answered with their prompt ids
PROMPT_IDS_RID = "textbound-prompt-ids-"
# smg's parser names (smg.smg_rs.get_available_tool_call_parsers / _reasoning_parsers) per family
PARSERS = {"qwen3": ("qwen", "qwen3"), "llama3_1": ("llama", None)}


def end_ids(family: Path, tokenizer: Tokenizer) -> tuple[int, ...]:
    """The family's end-of-sequence ids: generation_config.json's ``eos_token_id``, else
    tokenizer_config.json's ``eos_token``'s id."""
    generation = family / "generation_config.json"
    if generation.is_file():
        eos = json.loads(generation.read_text(encoding="utf-8")).get("eos_token_id")
        if eos is not None:
            return tuple(eos) if isinstance(eos, list) else (eos,)
    token = json.loads((family / "tokenizer_config.json").read_text(encoding="utf-8")).get("eos_token")
    token = token.get("content") if isinstance(token, dict) else token
    found = tokenizer.token_to_id(token) if isinstance(token, str) else None
    return () if found is None else (found,)


def draw(prompt_ids, size: int, max_tokens: int, stop_ids) -> tuple[list[int], int | None]:
    """The worker's ids for a prompt: uniform over ``size`` ids, the same for the same prompt,
    up to ``max_tokens`` or through the first of ``stop_ids`` (returned as the stop that ended it)."""
    rng = random.Random(json.dumps(list(prompt_ids)))
    drawn: list[int] = []
    for _ in range(max_tokens):
        token = rng.randrange(size)
        drawn.append(token)
        if token in stop_ids:
            return drawn, token
    return drawn, None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def worker_service(family: Path):
    """An SglangScheduler servicer of noise for ``family``'s vocabulary."""
    from smg_grpc_proto.generated import sglang_scheduler_pb2 as pb
    from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pb_grpc

    tokenizer = Tokenizer.from_file(str(family / "tokenizer.json"))
    size, eos = tokenizer.get_vocab_size(with_added_tokens=True), end_ids(family, tokenizer)

    class RandomScheduler(pb_grpc.SglangSchedulerServicer):
        def Generate(self, request, context):
            sampling = request.sampling_params
            prompt = list(request.tokenized.input_ids)
            if request.request_id.startswith(PROMPT_IDS_RID):
                drawn, stop = tokenizer.encode(" ".join(map(str, prompt)), add_special_tokens=False).ids, None
            else:
                stops = set(sampling.stop_token_ids) | (set() if sampling.ignore_eos else set(eos))
                limit = sampling.max_new_tokens if sampling.HasField("max_new_tokens") else DEFAULT_MAX_TOKENS
                drawn, stop = draw(prompt, size, limit, stops)
            if request.stream:
                for n, token in enumerate(drawn, 1):
                    yield pb.GenerateResponse(request_id=request.request_id, chunk=pb.GenerateStreamChunk(
                        token_ids=[token], prompt_tokens=len(prompt), completion_tokens=n))
            complete = pb.GenerateComplete(output_ids=[] if request.stream else drawn,
                                           finish_reason="length" if stop is None else "stop",
                                           prompt_tokens=len(prompt), completion_tokens=len(drawn))
            if stop is not None:
                complete.matched_token_id = stop
            yield pb.GenerateResponse(request_id=request.request_id, complete=complete)

        def HealthCheck(self, request, context):
            return pb.HealthCheckResponse(healthy=True, message="ok")

        def Abort(self, request, context):
            return pb.AbortResponse(success=True)

        def GetModelInfo(self, request, context):
            return pb.GetModelInfoResponse(
                model_path=str(family), tokenizer_path=str(family), is_generation=True,
                served_model_name=MODEL_NAME, max_context_length=CONTEXT, vocab_size=size,
                model_type="llama", eos_token_ids=list(eos), max_req_input_len=CONTEXT,
                architectures=["LlamaForCausalLM"])

        def GetServerInfo(self, request, context):
            return pb.GetServerInfoResponse(server_type="grpc", max_total_num_tokens=CONTEXT * 4)

        def GetLoads(self, request, context):
            return pb.GetLoadsResponse(dp_rank_count=1, loads=[pb.SchedulerLoad(dp_rank=0)])

    return pb_grpc.add_SglangSchedulerServicer_to_server, RandomScheduler()


def serve(family: Path, port: int) -> None:
    import grpc
    from smg.launch_router import launch_router, parse_router_args

    add, servicer = worker_service(family)
    worker = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKER_THREADS))
    add(servicer, worker)
    worker_port = worker.add_insecure_port(f"127.0.0.1:{free_port()}")
    worker.start()
    tool_parser, reasoning_parser = PARSERS.get(family.name, (None, None))
    argv = ["--host", "127.0.0.1", "--port", str(port), "--worker-urls", f"grpc://127.0.0.1:{worker_port}",
            "--model-path", str(family), "--tokenizer-path", str(family),
            "--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port())]
    argv += ["--tool-call-parser", tool_parser] if tool_parser else []
    argv += ["--reasoning-parser", reasoning_parser] if reasoning_parser else []
    try:
        launch_router(parse_router_args(argv))
    finally:
        worker.stop(grace=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", type=Path, help="a family folder (tokenizer.json, tokenizer_config.json)")
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    serve(options.family, options.port)


if __name__ == "__main__":
    main()
