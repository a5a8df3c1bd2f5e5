"""A running server as the implementation under test: its dialects, its HTTP client, its launcher.

Imports ``families`` (the tiny models' caches), impl, and the oracles' table of libraries (what
installs gguf, which writes the tiny models); nothing else of the harness.
"""
from .dialect import DIALECTS, Chunk, Dialect, Generation, GenerationRequest, NotProvided, ServerError, open_dialect

__all__ = ["DIALECTS", "Chunk", "Dialect", "Generation", "GenerationRequest", "NotProvided", "ServerError",
           "open_dialect"]
