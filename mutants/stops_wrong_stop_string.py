"""The stop string reported is the first one in the request's list that ends where the text was
cut, not the one that cut it ("abc" cut by "abc", reported as "bc" when "bc" is listed first)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class StopChecker(impl.StopChecker):
    def __init__(self, stops, include_stop=False):
        super().__init__(stops, include_stop)
        self.stops = list(stops)

    @property
    def stop_string(self):
        found = super().stop_string
        return found and next(stop for stop in self.stops if stop and found.endswith(stop))
