"""NVIDIA Dynamo's OpenAI front end serving a family's tokenizer and chat template in front of a
seeded random-token worker, on 127.0.0.1; run by the python of Dynamo's own environment
(``ai-dynamo-runtime``; nox -s server_dynamo builds it), started and stopped by
textbound.server.launch (tools/serve_engine.py --engine dynamo).

    python engines/dynamo/serve.py FAMILY_DIR --port 8000

Server entry point: ``python -m dynamo.frontend``'s ``run_input(runtime, "http",
make_engine(EngineType.Dynamic))``, before a worker registered as Dynamo's vLLM worker registers.

Dynamo's own text boundary is what answers: the front end (``run_input(runtime, "http",
make_engine(EngineType.Dynamic))``, as ``python -m dynamo.frontend`` runs it) renders the template
and tokenizes (its preprocessor), sends token ids to the worker, detokenizes the ids it streams
back, applies stop strings and ``skip_special_tokens``. The worker is what a real engine is to it
(``register_model(ModelInput.Tokens, ...)`` + ``serve_endpoint``, as Dynamo's vLLM and SGLang
workers register): it draws ids uniformly from the vocabulary with a generator seeded by the
request's seed and prompt ids, ends at a hidden or visible stop id (the id sent, finish "stop")
or at max_tokens ("length"), and constrains nothing (guided decoding is ignored: the structured
and tool checks are not run against it). Its output is noise, as a random-weight model's.

One process holds the runtime ("mem" discovery, TCP request plane), the worker and the front end.
The request and response planes are bound to 127.0.0.1 (DYN_TCP_RPC_HOST,
DYN_TCP_RESPONSE_STREAM_HOST): by default Dynamo binds them to an interface address, through which
a request may never return in a sandbox. Ready when ``GET /v1/models`` lists MODEL_NAME.

The model folder Dynamo reads is made in a temporary folder: the family's tokenizer files linked,
and a config.json naming a Llama of the vocabulary's size (Dynamo reads config.json for the
context length and end-of-sequence ids; it loads no weights).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
from pathlib import Path

os.environ.setdefault("DYN_TCP_RPC_HOST", "127.0.0.1")
os.environ.setdefault("DYN_TCP_RESPONSE_STREAM_HOST", "127.0.0.1")

import uvloop  # noqa: E402 - after the environment Dynamo reads at import
from dynamo.llm import (EngineType, EntrypointArgs, ModelInput, ModelType, WorkerType, make_engine,  # noqa: E402
                        register_model, run_input)
from dynamo.runtime import DistributedRuntime  # noqa: E402

MODEL_NAME = "m"
WORKER_ENDPOINT = "textbound.worker.generate"
CONTEXT = 4096
DEFAULT_MAX_TOKENS = 16  # a request naming none
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
                   "chat_template.jinja", "chat_template.json")


def vocabulary_size(tokenizer_json: Path) -> int:
    """One past the largest id of a tokenizer.json (model vocabulary and added tokens)."""
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab = spec.get("model", {}).get("vocab") or {}
    ids = list(range(len(vocab))) if isinstance(vocab, list) else list(vocab.values())
    ids += [added["id"] for added in spec.get("added_tokens") or ()]
    return max(ids) + 1


def model_folder(family: Path, into: Path) -> Path:
    """``into`` holding the family's tokenizer files and a config.json Dynamo accepts."""
    for name in TOKENIZER_FILES:
        if (family / name).is_file():
            (into / name).symlink_to((family / name).resolve())
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "max_position_embeddings": CONTEXT,
              "vocab_size": vocabulary_size(family / "tokenizer.json")}
    (into / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return into


class RandomWorker:
    """A token engine of noise: ids uniform over the vocabulary, seeded per request."""

    def __init__(self, size: int):
        self.size = size

    async def generate(self, request: dict, context=None):
        stops = request.get("stop_conditions") or {}
        sampling = request.get("sampling_options") or {}
        stop_ids = set(stops.get("stop_token_ids_hidden") or ()) | set(stops.get("stop_token_ids_visible") or ())
        if stops.get("ignore_eos"):
            stop_ids = set()
        rng = random.Random(json.dumps([sampling.get("seed"), request.get("token_ids")]))
        for _ in range(stops.get("max_tokens") or DEFAULT_MAX_TOKENS):
            token = rng.randrange(self.size)
            if token in stop_ids:
                yield {"token_ids": [token], "finish_reason": "stop"}
                return
            yield {"token_ids": [token]}
        yield {"token_ids": [], "finish_reason": "length"}


async def serve(family: Path, port: int) -> None:
    with tempfile.TemporaryDirectory(prefix="textbound-dynamo-") as folder:
        model = model_folder(family, Path(folder))
        runtime = DistributedRuntime(asyncio.get_running_loop(), "mem", "tcp")
        endpoint = runtime.endpoint(WORKER_ENDPOINT)
        await register_model(ModelInput.Tokens, ModelType.Chat | ModelType.Completions, endpoint, str(model),
                             MODEL_NAME, worker_type=WorkerType.Aggregated)
        worker = RandomWorker(vocabulary_size(model / "tokenizer.json"))
        serving = asyncio.ensure_future(endpoint.serve_endpoint(worker.generate))
        front = await make_engine(runtime, EntrypointArgs(EngineType.Dynamic, http_host="127.0.0.1", http_port=port))
        await asyncio.gather(serving, run_input(runtime, "http", front))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", type=Path, help="a family folder (tokenizer.json, tokenizer_config.json)")
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    uvloop.run(serve(options.family, options.port))


if __name__ == "__main__":
    main()
