"""A stop checker that, where a stop completes, releases the whole delta it completes in: the stop
and any text after it in that delta are kept, include_stop or not (SkyRL's generator in
NovaSky-AI/SkyRL#778 returns the tokens through the one in which a stop string appears: "if the stop
string is "stop" but the final token decodes to "stop!", then this code will return "stop!"", as
Tinker does). Before a stop it holds back a tail that may begin one, as impl does."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class StopChecker(impl.StopChecker):
    def __init__(self, stops, include_stop=False):
        super().__init__(stops, include_stop)
        self._given = self._released = ""

    def add(self, delta):
        if self.stopped:
            return ""
        self._given += delta
        released = super().add(delta)
        if self.stopped:
            released = self._given[len(self._released):]
        self._released += released
        return released

    def finish(self):
        tail = super().finish()
        self._released += tail
        return tail
