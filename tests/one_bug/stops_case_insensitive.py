"""A stop checker that matches stop strings regardless of case ("END" stops at "end"), as a
checker comparing lowercased text does. Otherwise it stops as the reference does: at the stop that
ends first (the longest of those ending there), holding back a tail that may begin a stop, in any case."""
import re

from textbound.impl import *  # noqa: F403 - re-exports impl's names

from .holding_checker import HoldingStopChecker


class StopChecker(HoldingStopChecker):
    def add(self, delta):
        if self.stopped:
            return ""
        self._text += delta
        found = [(m.end(), m.start() - m.end(), m.start(), s) for s in self._stops
                 if (m := re.search(re.escape(s), self._text, re.IGNORECASE))]
        if found:
            stop_end, _, start, self.stop_string = min(found)
            end = stop_end if self._include else start
        else:
            end = len(self._text) - self._held()
        return self._release(end)

    def _held(self) -> int:
        text = self._text.casefold()
        return max((k for s in self._stops for k in range(1, len(s)) if text.endswith(s[:k].casefold())), default=0)
