"""A stop checker that stops only where the text so far ends with a stop string: a stop followed
by more text in the same delta is missed (vLLM before vllm-project/vllm#3672, reported as
vllm-project/vllm#3572: "stop sequence is only checked with endswith", so a stop ``DE`` inside
the token ``DEF`` let generation run on). It holds back a tail that may begin a stop, as impl does."""
from impl import *  # noqa: F403 - re-exports impl's names


class StopChecker:
    def __init__(self, stops, include_stop=False):
        self._stops, self._include = [s for s in stops if s], include_stop
        self._text, self._released = "", 0
        self.stop_string = None

    @property
    def stopped(self):
        return self.stop_string is not None

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

    def finish(self):
        return "" if self.stopped else self._release(len(self._text))

    def _held(self) -> int:
        """The longest tail that is a proper prefix of a stop."""
        return max((k for s in self._stops for k in range(1, len(s)) if self._text.endswith(s[:k])), default=0)

    def _release(self, end: int) -> str:
        out = self._text[self._released:end]
        self._released = max(self._released, end)
        return out
