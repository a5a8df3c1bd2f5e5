"""One stop checker state for every stream: the automaton's state and the held tail live on the class,
reset by each new instance, so streams checked together (the n choices of a request, concurrent
requests) release and match each other's text: the shared per-request state of vllm#38158 and
sglang#3754, in the stop checker."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import shared_state

StopChecker = shared_state(impl.StopChecker, "_state", "_held")
