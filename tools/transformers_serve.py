"""Serves a family's tiny random-weight model with ``transformers serve`` on 127.0.0.1 (a free port)
while a command runs, then stops it: the model is written by transformers itself, in the server's
environment (engines/transformers_serve/tiny_model.py), beside the family's tokenizer.

    python tools/transformers_serve.py --python ENV/bin/python --family qwen3 -- \\
        textbound check --server {url} --server-dialect transformers-serve --family qwen3

``{url}`` in the command becomes the server's URL; the exit status is the command's (2 when the
model cannot be written or the server cannot be started, with one line saying why).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from textbound.families import FamilyError, resolve
from textbound.server.launch import LaunchError, running_server, transformers_serve_plan

ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL_SCRIPT = ROOT / "engines" / "transformers_serve" / "tiny_model.py"
URL_PLACEHOLDER = "{url}"
SETUP_ERROR = 2
# The config each family's tiny model is made of (its model type picks transformers serve's
# response parser and fallback template); llama's for the others.
MODEL_TYPES = {"qwen3": "qwen3", "qwen": "qwen2"}
DEFAULT_MODEL_TYPE = "llama"


def write_tiny_model(python: Path, family: Path, model_type: str, out: Path) -> Path:
    """The tiny model of ``family`` written into ``out`` by the server environment's ``python``;
    LaunchError with transformers' last words when it fails."""
    written = subprocess.run([str(python), str(TINY_MODEL_SCRIPT), str(family), str(out), "--model-type", model_type],
                             capture_output=True, text=True)
    if written.returncode != 0:
        tail = written.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise LaunchError(f"writing the tiny {model_type} model of {family} failed: {tail[0]}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", type=Path, required=True, help="the python of the environment holding transformers[serving]")
    parser.add_argument("--family", required=True, help="serve this family's tiny model while the command runs")
    parser.add_argument("command", nargs="*", help="run with {url} replaced by the server's URL")
    options = parser.parse_args(argv)
    try:
        (family,) = resolve([options.family], [], [])
        with tempfile.TemporaryDirectory(prefix="textbound-tiny-") as work:
            model = write_tiny_model(options.python, family.path, MODEL_TYPES.get(family.name, DEFAULT_MODEL_TYPE),
                                     Path(work) / family.name)
            with running_server(transformers_serve_plan(options.python, model)) as url:
                print(f"transformers serve: {family.name} at {url}", file=sys.stderr)
                command = [part.replace(URL_PLACEHOLDER, url) for part in options.command]
                return subprocess.run(command).returncode if command else 0
    except (LaunchError, FamilyError, ValueError) as error:
        print(f"transformers_serve: {error}", file=sys.stderr)
        return SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
