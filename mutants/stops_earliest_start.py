"""Of the stop strings found in the text so far, the one that starts first wins, though another one
ended earlier ("xabcd" with "abcd" and "b" gives "x", not "xa")."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import ReleasingStopChecker


class StopChecker(ReleasingStopChecker):
    def releasable(self, final):
        if not self.stopped:
            return self.impl_output
        start, stop = min((self.seen.find(stop), stop) for stop in self.stops if stop and stop in self.seen)
        self.reported = stop
        return self.seen[:start + len(stop) if self.include_stop else start]
