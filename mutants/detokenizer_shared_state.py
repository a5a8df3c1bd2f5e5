"""One detokenizer state for every stream: the window of ids and the text released live on the class,
reset by each new instance, so streams decoded together (a batch of requests, the n choices of one)
read each other's ids: sglang#3754 (batched requests sharing one incremental decode state)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import shared_state

IncrementalDetokenizer = shared_state(impl.IncrementalDetokenizer, "_window", "_released", "_unsettled")
