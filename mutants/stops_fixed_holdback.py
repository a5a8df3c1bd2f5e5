"""The stop checker always holds back as many characters as the longest stop string has, less one,
instead of only a tail that may still begin a stop."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ReleasingStopChecker


class StopChecker(ReleasingStopChecker):
    def releasable(self, final):
        if final or self.stopped:
            return self.impl_output
        hold = max(map(len, self.stops), default=1) - 1
        return self.impl_output[:max(0, len(self.seen) - hold)]
