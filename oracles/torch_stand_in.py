"""A stand-in ``torch`` for code that imports torch at the top but never uses it on the path taken:
llama.cpp's converter on a vocabulary-only conversion, transformers' GGUF reader on a tokenizer.
Every name of it is a placeholder that serves in annotations, defaults and base classes and raises
when called, so a use that was not expected fails loudly. Installed only in a child process.

    python -m textbound.oracles.torch_stand_in SCRIPT ARG...     # runs SCRIPT as __main__ beside the stand-in

    >>> install("reading a GGUF's tokenizer"); import torch; torch.float32.name    # doctest: +SKIP
    'torch.float32'
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import runpy
import sys
import types
from pathlib import Path


class Absent:
    """Any torch name: a placeholder in annotations and defaults, an error when called."""

    def __init__(self, name: str, purpose: str):
        self.name, self.purpose = name, purpose

    def __getattr__(self, name: str) -> "Absent":
        return Absent(f"{self.name}.{name}", self.purpose)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.name} called: {self.purpose} needs no torch")

    def __mro_entries__(self, bases):
        return (object,)


def install(purpose: str) -> None:
    """Puts the stand-in in ``sys.modules``: found by ``import torch``, yet without a distribution,
    so packages asking importlib.metadata see torch as not installed."""
    torch = types.ModuleType("torch")
    torch.__spec__ = importlib.machinery.ModuleSpec("torch", None)
    torch.__getattr__ = lambda name: Absent(f"torch.{name}", purpose)
    torch.inference_mode = contextlib.nullcontext
    sys.modules["torch"] = torch


if __name__ == "__main__":
    script = Path(sys.argv[1])
    install(f"running {script.name}")
    sys.argv = sys.argv[1:]
    sys.path.insert(0, str(script.parent))
    runpy.run_path(str(script), run_name="__main__")
