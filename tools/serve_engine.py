"""Serves a family's tiny model with an engine's own server on 127.0.0.1 while a command runs, then
stops it (textbound.server.launch): the servers that need no build of ours.

    python tools/serve_engine.py --engine llama-cpp-python --family qwen3 -- \\
        textbound check --server {url} --server-dialect llama-cpp-python --family qwen3 --budget quick

- ``llama-cpp-python``: ``python -m llama_cpp.server`` run by ``$TEXTBOUND_LLAMA_CPP_PYTHON`` (an
  environment holding ``llama-cpp-python[server]``; default: this python) on the family's tiny GGUF
  (textbound.server.tiny_model, its vocabulary converted by the llama-cpp-python sdist's converter);
- ``dynamo``: NVIDIA Dynamo's OpenAI front end on the family folder's tokenizer and template, in
  front of a seeded random-token worker (engines/dynamo/serve.py), run by ``$TEXTBOUND_DYNAMO_PYTHON``
  (an environment holding ``ai-dynamo-runtime``);
- ``smg``: SGLang's model gateway, its router in gRPC mode on the family folder's tokenizer and
  template, in front of a seeded random-token SglangScheduler worker (engines/smg/serve.py), run by
  ``$TEXTBOUND_SMG_PYTHON`` (an environment holding ``smg``, ``smg-grpc-proto`` and ``tokenizers``).

``{url}`` in the command becomes the server's URL; the exit status is the command's (2 when the
server cannot be started, with one line saying why).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from textbound.families import FamilyError, resolve
from textbound.server.launch import (MODELS_PATH, PORT_PLACEHOLDER, LaunchError, LaunchPlan, llama_cpp_python_plan,
                                     run_while_serving, tiny_model)

SETUP_ERROR = 2
PYTHON_ENV = {"llama-cpp-python": "TEXTBOUND_LLAMA_CPP_PYTHON", "dynamo": "TEXTBOUND_DYNAMO_PYTHON",
              "smg": "TEXTBOUND_SMG_PYTHON"}
ENGINES = Path(__file__).resolve().parents[1] / "engines"
# The engines served by a script of ours before a random-token worker: engines/ENGINE/serve.py
WORKER_SERVED = ("dynamo", "smg")
SERVED_MODEL = '"id":"m"'  # those scripts' MODEL_NAME, listed by GET /v1/models once served
# smg lists the model once its worker is active and registers the model's tokenizer (which /v1/tokenize
# looks up by model) in a job of its own, either first
ALSO_READY = {"smg": (("/v1/tokenizers", '"name":"m"'),)}


def worker_served_plan(engine: str, python: Path, family: Path) -> LaunchPlan:
    """engines/ENGINE/serve.py serving ``family``: ready once its model is listed (Dynamo's /health
    answers 200 before the worker has registered), and smg's tokenizer for it registered."""
    return LaunchPlan((str(python), str(ENGINES / engine / "serve.py"), str(family), "--port", PORT_PLACEHOLDER),
                      health_path=MODELS_PATH, ready_marker=SERVED_MODEL, also_ready=ALSO_READY.get(engine, ()))


def engine_python(engine: str) -> Path:
    """The python that runs ``engine``'s server: ``$TEXTBOUND_..._PYTHON``, else this one."""
    return Path(os.environ.get(PYTHON_ENV[engine], "").strip() or sys.executable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True, choices=sorted(PYTHON_ENV))
    parser.add_argument("--family", required=True, help="serve this family's tiny model while the command runs")
    parser.add_argument("command", nargs="*", help="run with {url} replaced by the server's URL")
    options = parser.parse_args(argv)
    try:
        (family,) = resolve([options.family], [], [])
        python = engine_python(options.engine)
        plan = (worker_served_plan(options.engine, python, family.path) if options.engine in WORKER_SERVED
                else llama_cpp_python_plan(python, tiny_model(family.path)))
        return run_while_serving(plan, options.command)
    except (LaunchError, FamilyError, ValueError) as error:
        print(f"serve_engine: {error}", file=sys.stderr)
        return SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
