"""Output as a server streams it, one generated token at a time.

- detokenizer: ids to text deltas that are never taken back (IncrementalDetokenizer)
- stops: stop strings found across deltas, holding back only what may still become one (StopChecker)

    >>> checker = StopChecker(["</s>"])
    >>> checker.add("Hi</"), checker.add("s> more"), checker.stop_string
    ('Hi', '', '</s>')
"""
from .detokenizer import IncrementalDetokenizer
from .stops import StopChecker

__all__ = ["IncrementalDetokenizer", "StopChecker"]
