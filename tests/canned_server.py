"""A server on 127.0.0.1 that answers each path with a canned answer and records every request, and
the dialect of a server speaking to it: the dialects' unit tests run on it, without the engine.

    with canned({"/tokenize": {"tokens": [1]}}, "llama.cpp") as dialect:
        dialect.tokenize("Hi", add_special=False)   # Canned.requests == [("/tokenize", {...})]
"""
from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from textbound.server.dialect import open_dialect


class Canned(BaseHTTPRequestHandler):
    """Answers each path with ``answers[path]``: an object as a JSON body, a list as SSE events (a
    bytes event written as given: a named one, without data); records ``(path, body)`` per request."""

    answers: dict = {}
    requests: list = []

    def do_GET(self) -> None:
        self._answer(None)

    def do_POST(self) -> None:
        self._answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

    def _answer(self, body) -> None:
        self.requests.append((self.path, body))
        answer = self.answers[self.path]
        stream = isinstance(answer, list)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        self.end_headers()
        events = answer if stream else [answer]
        for event in events:
            if isinstance(event, bytes):
                self.wfile.write(event)
                continue
            data = event if isinstance(event, str) else json.dumps(event)
            self.wfile.write((f"data: {data}\n\n" if stream else data).encode())

    def log_message(self, *args) -> None:
        pass


@contextmanager
def canned(answers: dict, dialect: str, model: str | None = None):
    """The ``dialect`` speaking to a Canned server with ``answers`` (Canned.requests emptied)."""
    Canned.answers, Canned.requests = answers, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield open_dialect(dialect, f"http://127.0.0.1:{server.server_port}", model=model, timeout=5)
    finally:
        server.shutdown()
        server.server_close()
