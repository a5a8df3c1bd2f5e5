"""A stop checker that, of the stop strings in the newest text, stops at the first one the request
lists rather than the one that completes first (vLLM's ``check_stop_strings`` before
vllm-project/vllm#49391: "returns the first stop string in list order that is found in the newly
generated text"; the same in vLLM's Rust frontend, vllm-project/vllm#50200, and in Dynamo's,
ai-dynamo/dynamo#14848: "there" with stops "re", "he" gave "the"). Two stops complete in one delta
where a token decodes to several characters or a step appends several tokens. It searches, as vLLM
does, the newest delta and the stop's length less one before it, and holds back a tail that may
begin a stop, as impl does."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names

from .holding_checker import HoldingStopChecker


class StopChecker(HoldingStopChecker):
    def add(self, delta):
        if self.stopped:
            return ""
        self._text += delta
        for stop in self._stops:
            start = self._text.find(stop, max(0, len(self._text) - len(delta) - len(stop) + 1))
            if start != -1:
                self.stop_string = stop
                return self._release(start + len(stop) if self._include else start)
        return self._release(len(self._text) - self._held())
