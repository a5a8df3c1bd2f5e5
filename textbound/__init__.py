"""textbound: differential conformance testing for the text boundary of an LLM inference server."""
