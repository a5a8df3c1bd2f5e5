"""A stop checker that matches stop strings regardless of case ("END" stops at "end"), as a
checker comparing lowercased text does. It holds back a tail that may begin a stop, as impl does."""
import re

from textbound.impl import *  # noqa: F403 - re-exports impl's names

from .holding_checker import HoldingStopChecker


class StopChecker(HoldingStopChecker):
    def add(self, delta):
        if self.stopped:
            return ""
        self._text += delta
        found = [(m.start(), -len(s), s) for s in self._stops
                 if (m := re.search(re.escape(s), self._text, re.IGNORECASE))]
        if found:
            start, _, self.stop_string = min(found)
            end = start + (len(self.stop_string) if self._include else 0)
        else:
            end = len(self._text) - self._held()
        return self._release(end)
