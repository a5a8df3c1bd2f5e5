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
- ``mlx-lm``: ``python -m mlx_lm.server`` run by ``$TEXTBOUND_MLX_LM_PYTHON`` (an environment holding
  ``mlx-lm``) on a tiny random-weight model of the family that mlx-lm itself writes
  (engines/mlx_lm/tiny_model.py).

``{url}`` in the command becomes the server's URL; the exit status is the command's (2 when the
server cannot be started, with one line saying why).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from textbound.families import FamilyError, resolve
from textbound.server.launch import (HOST, MODELS_PATH, PORT_PLACEHOLDER, LaunchError, LaunchPlan,
                                     llama_cpp_python_plan, run_while_serving, tiny_model)

SETUP_ERROR = 2
PYTHON_ENV = {"llama-cpp-python": "TEXTBOUND_LLAMA_CPP_PYTHON", "dynamo": "TEXTBOUND_DYNAMO_PYTHON",
              "mlx-lm": "TEXTBOUND_MLX_LM_PYTHON", "smg": "TEXTBOUND_SMG_PYTHON"}
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


MLX_LM_TINY_MODEL = ENGINES / "mlx_lm" / "tiny_model.py"
MLX_LM_MODEL_TYPES = {"qwen3": "qwen3"}  # the mlx_lm.models class of a family's tiny model; llama's for the others


@contextmanager
def mlx_lm_plan(python: Path, family: Path) -> Iterator[LaunchPlan]:
    """``python -m mlx_lm.server`` serving the tiny model of the family folder ``family``, written by
    mlx-lm itself into a temporary folder removed afterwards; LaunchError with its last words when the
    model cannot be written. While it serves, ``$HF_HUB_CACHE`` names an empty folder: its ``GET
    /v1/models`` (which the check asks first) scans the Hugging Face cache after sending 200, and
    where that folder is missing answers with an empty body (mlx_lm/server.py 0.32.2 lines 1818-1839,
    ml-explore/mlx-lm#1636)."""
    with tempfile.TemporaryDirectory(prefix="textbound-mlx-lm-") as work:
        model, hub = Path(work) / family.name, Path(work) / "hub"
        hub.mkdir()
        written = subprocess.run([str(python), str(MLX_LM_TINY_MODEL), str(family), str(model),
                                  "--model-type", MLX_LM_MODEL_TYPES.get(family.name, "llama")],
                                 capture_output=True, text=True)
        if written.returncode != 0:
            last = (written.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise LaunchError(f"writing the tiny mlx-lm model of {family} failed: {last}")
        with mock.patch.dict(os.environ, {"HF_HUB_CACHE": str(hub)}):
            yield LaunchPlan((str(python), "-m", "mlx_lm.server", "--model", str(model), "--host", HOST,
                              "--port", PORT_PLACEHOLDER))


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
        if options.engine == "mlx-lm":
            with mlx_lm_plan(python, family.path) as plan:
                return run_while_serving(plan, options.command)
        plan = (worker_served_plan(options.engine, python, family.path) if options.engine in WORKER_SERVED
                else llama_cpp_python_plan(python, tiny_model(family.path)))
        return run_while_serving(plan, options.command)
    except (LaunchError, FamilyError, ValueError) as error:
        print(f"serve_engine: {error}", file=sys.stderr)
        return SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
