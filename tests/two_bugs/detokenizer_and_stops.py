"""The detokenizer releases an unfinished character as U+FFFD (mutants.detokenizer_unfinished_released)
and the stop checker misses a stop split across deltas (mutants.stops_within_delta)."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names
from textbound.mutants.detokenizer_unfinished_released import IncrementalDetokenizer  # noqa: F401
from textbound.mutants.stops_within_delta import StopChecker  # noqa: F401
