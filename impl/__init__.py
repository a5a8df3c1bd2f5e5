"""impl: a pure-Python text boundary for LLM inference, matching Hugging Face exactly.

Public names (a contract: the harness and users reach impl only through these):
Tokenizer, StopChecker, TokenizerFileError.
"""
from .errors import TokenizerFileError
from .stops import StopChecker
from .tokenizer import Tokenizer

__version__ = "0.1.0"
__all__ = ["StopChecker", "Tokenizer", "TokenizerFileError"]
