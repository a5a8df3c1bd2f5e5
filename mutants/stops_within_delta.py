"""Stop strings are looked for in each delta alone: one split across deltas is missed."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class StopChecker(impl.StopChecker):
    def __init__(self, stops, include_stop=False):
        super().__init__(stops, include_stop)
        self.stops, self.include_stop, self.found = list(stops), include_stop, None

    stopped = property(lambda self: self.found is not None)
    stop_string = property(lambda self: self.found)

    def add(self, delta):
        if self.stopped:
            return ""
        alone = impl.StopChecker(self.stops, self.include_stop)
        released = alone.add(delta)
        self.found = alone.stop_string
        return released if self.stopped else released + alone.finish()

    def finish(self):
        return ""
