"""include_stop is ignored: the stop string is never part of the output."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


class StopChecker(impl.StopChecker):
    def __init__(self, stops, include_stop=False):
        super().__init__(stops, include_stop=False)
