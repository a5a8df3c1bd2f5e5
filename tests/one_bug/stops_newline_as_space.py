"""A stop checker whose released text has each "\n" replaced by " " (an engine flattening its
stream's chunks onto one line), stopping where impl does: "a\nb" with no stop comes out "a b"."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


class StopChecker(impl.StopChecker):
    def add(self, delta):
        return super().add(delta).replace("\n", " ")

    def finish(self):
        return super().finish().replace("\n", " ")
