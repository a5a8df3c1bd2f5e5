"""One output parser state for every choice: the stream state machine lives on the class, replaced by
each new instance, so the n choices of one request (or concurrent requests) parse into one another's
state: vLLM's tool parser shared across n>1 choices (vllm#38158, #38526, #42493)."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import shared_state

OutputParser = shared_state(impl.OutputParser, "_stream")
