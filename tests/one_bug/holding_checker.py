"""What the hand-written stop checkers of tests/one_bug/ share: they hold back a tail that may
begin a stop, as impl does, and release text up to an end their ``add`` chooses; only where they
look for a stop differs (``HoldingStopChecker`` is no bug module: it is not in ``COMPONENTS``)."""


class HoldingStopChecker:
    def __init__(self, stops, include_stop=False):
        self._stops, self._include = [s for s in stops if s], include_stop
        self._text, self._released = "", 0
        self.stop_string = None

    @property
    def stopped(self):
        return self.stop_string is not None

    def add(self, delta):
        raise NotImplementedError

    def finish(self):
        return "" if self.stopped else self._release(len(self._text))

    def _held(self) -> int:
        """The longest tail that is a proper prefix of a stop."""
        return max((k for s in self._stops for k in range(1, len(s)) if self._text.endswith(s[:k])), default=0)

    def _release(self, end: int) -> str:
        out = self._text[self._released:end]
        self._released = max(self._released, end)
        return out
