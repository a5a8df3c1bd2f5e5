"""The HTTP APIs a server under test may speak, each a textbound.server.dialect.Dialect."""
