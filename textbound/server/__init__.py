"""A running server as the implementation under test: its dialects, its HTTP client, its launcher.

Imports ``families`` (the tiny models' caches) and impl; nothing else of the harness.
"""
from .dialect import DIALECTS, Chunk, Dialect, Generation, GenerationRequest, NotProvided, ServerError, open_dialect

__all__ = ["DIALECTS", "Chunk", "Dialect", "Generation", "GenerationRequest", "NotProvided", "ServerError",
           "open_dialect"]
