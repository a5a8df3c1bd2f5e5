"""Builds llama.cpp's llama-server (cached; textbound.server.launch) and prints where it is; with
``--family``, also serves that family's tiny model on 127.0.0.1 while a command runs, then stops it.

    python tools/build_llama_server.py                       # -> /root/.cache/textbound/llama_cpp/server-0.3.36/build/bin/llama-server
    python tools/build_llama_server.py --family qwen3 -- textbound check --server {url} --server-dialect llama.cpp --family qwen3

``{url}`` in the command becomes the server's URL; the exit status is the command's (2 when the
server cannot be built or started, with one line saying why).
"""
from __future__ import annotations

import argparse
import sys

from textbound.families import FamilyError, resolve
from textbound.server.launch import LaunchError, build_llama_server, run_while_serving, tiny_model_plan

SETUP_ERROR = 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", help="serve this family's tiny model while the command runs")
    parser.add_argument("command", nargs="*", help="run with {url} replaced by the server's URL")
    options = parser.parse_args(argv)
    try:
        binary = build_llama_server()
        print(f"llama-server: {binary}", file=sys.stderr)
        if not options.family:
            print(binary)
            return 0
        (family,) = resolve([options.family], [], [])
        return run_while_serving(tiny_model_plan(binary, family.path), options.command)
    except (LaunchError, FamilyError, ValueError) as error:
        print(f"build_llama_server: {error}", file=sys.stderr)
        return SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
