"""A stop checker that stops only where the text so far ends with a stop string: a stop followed
by more text in the same delta is missed (vLLM before vllm-project/vllm#3672, reported as
vllm-project/vllm#3572: "stop sequence is only checked with endswith", so a stop ``DE`` inside
the token ``DEF`` let generation run on). It holds back a tail that may begin a stop, as impl does."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names

from .holding_checker import HoldingStopChecker


class StopChecker(HoldingStopChecker):
    def add(self, delta):
        if self.stopped:
            return ""
        self._text += delta
        ending = [s for s in self._stops if self._text.endswith(s)]
        if ending:
            self.stop_string = max(ending, key=len)
            end = len(self._text) - (0 if self._include else len(self.stop_string))
        else:
            end = len(self._text) - self._held()
        return self._release(end)
