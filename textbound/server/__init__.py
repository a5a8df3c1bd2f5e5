"""A running server as the implementation under test: its dialects, its HTTP client, its launcher."""
from .dialect import DIALECTS, Chunk, Dialect, Generation, GenerationRequest, NotProvided, ServerError, open_dialect

__all__ = ["DIALECTS", "Chunk", "Dialect", "Generation", "GenerationRequest", "NotProvided", "ServerError",
           "open_dialect"]
