"""impl: a pure-Python text boundary for LLM inference, matching Hugging Face exactly.

Public names (a contract: the harness and users reach impl only through these):
Tokenizer, IncrementalDetokenizer, StopChecker, TokenizerFileError.
"""
from .detokenizer import IncrementalDetokenizer
from .errors import TokenizerFileError
from .stops import StopChecker
from .tokenizer import Tokenizer

__version__ = "0.1.0"
__all__ = ["IncrementalDetokenizer", "StopChecker", "Tokenizer", "TokenizerFileError"]
