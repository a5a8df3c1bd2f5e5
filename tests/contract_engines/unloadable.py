"""An engine whose ``Tokenizer.from_dir`` raises on every family: the run cannot be set up (exit 2)."""
from textbound.impl import IncrementalDetokenizer, StopChecker  # noqa: F401
from textbound.impl import Tokenizer as _Tokenizer

__version__ = "unloadable-1"


class Tokenizer(_Tokenizer):
    @classmethod
    def from_dir(cls, path):
        raise RuntimeError("this engine reads no tokenizer.json")
