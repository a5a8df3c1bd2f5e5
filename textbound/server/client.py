"""HTTP to an untrusted server: JSON requests and SSE streams, each bounded in time and size.

The server may hang, close the connection, answer a status other than 200, a redirect, invalid
JSON, half an SSE event or an endless body. Each of these raises ``ServerError`` naming what
happened and carrying the exact request; nothing is retried, no redirect is followed, and only the
scheme, host and port of the URL given are ever contacted. The time limit is for the whole
request, the response's headers and body included (a watchdog closes the connection at the
deadline, so a server trickling bytes cannot stretch it).

    >>> client = ServerClient("http://127.0.0.1:8000", timeout=5)        # doctest: +SKIP
    >>> client.post_json("/tokenize", {"prompt": "Hi"})                  # doctest: +SKIP
    {'count': 1, 'max_model_len': 4096, 'tokens': [13048], 'token_strs': None}
    >>> [event["choices"][0]["text"] for event in client.stream("/v1/completions", {...})]  # doctest: +SKIP
    ['Hi', ' there', '']
"""
from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Generator, Iterator
from urllib.parse import urlsplit

from .protocol import ServerError

MAX_BODY = 16 * 2**20
READ_SIZE = 65536
ERROR_EXCERPT = 200  # characters of a non-200 body kept in the error
DONE = "[DONE]"


class ServerClient:
    """Requests to one server at ``url`` (``http://host:port``, optionally with a path prefix):
    each gets ``timeout`` seconds in all and a body of at most ``max_body`` bytes."""

    def __init__(self, url: str, timeout: float = 30.0, max_body: int = MAX_BODY):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server URL must be http://host:port or https://host:port, found {url!r}")
        self.url, self.timeout, self.max_body = url, timeout, max_body
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")

    def get_json(self, path: str) -> dict:
        """The JSON object answering ``GET path``."""
        return self._json({"method": "GET", "path": path, "body": None})

    def post_json(self, path: str, body: dict) -> dict:
        """The JSON object answering ``POST path`` with ``body``."""
        return self._json({"method": "POST", "path": path, "body": body})

    def post_value(self, path: str, body: dict):
        """The JSON value, an object or not, answering ``POST path`` (SGLang's /generate answers a list)."""
        request = {"method": "POST", "path": path, "body": body}
        return _value(self._body(request), "the body", request)

    def stream(self, path: str, body: dict, done: str | None = DONE, named: bool = False,
               done_required: bool = True) -> Generator[dict, None, str | None]:
        """The JSON objects of the SSE events answering ``POST path``, in order, until the event
        ``data: <done>`` (vLLM's and OpenAI's ``[DONE]``) or, with ``done=None``, the body's end.
        A stream ending otherwise, or in the middle of an event, raises ServerError; with
        ``done_required=False`` a stream ending at the body's end without ``data: <done>`` is read
        to its end, and the generator returns ``done`` (None otherwise), so that the caller still
        knows the terminator was missing. With ``named``, an event without data but with a name
        comes as ``{"event": NAME, "comment": TEXT}`` (its comment lines joined: Dynamo's
        annotations, ``event: token_ids`` then ``: "[1, 2]"``)."""
        request = {"method": "POST", "path": path, "body": body}
        with _Exchange(self, request) as exchange:
            buffer, count = b"", 0
            for data in exchange.body():
                buffer += data.replace(b"\r\n", b"\n")
                while b"\n\n" in buffer:
                    raw, buffer = buffer.split(b"\n\n", 1)
                    payload = _event_data(raw, count, request)
                    count += 1
                    if payload is None:
                        if named and (event := _named_event(raw)):
                            yield event
                        continue
                    if done is not None and payload == done:
                        return None
                    yield _parsed(payload, f"SSE event {count}", request)
            if buffer.strip():
                raise ServerError(f"half an SSE event: the stream ended inside event {count + 1}", request)
            if done is not None and done_required:
                raise ServerError(f"the stream ended after {count} events without data: {done}", request)
            return done

    def _json(self, request: dict) -> dict:
        return _parsed(self._body(request), "the body", request)

    def _body(self, request: dict) -> bytes:
        with _Exchange(self, request) as exchange:
            return b"".join(exchange.body())


class _Exchange:
    """One request and its response, under the client's deadline and size limit."""

    def __init__(self, client: ServerClient, request: dict):
        self.client, self.request = client, request
        path = request["path"]
        if not path.startswith("/") or path.startswith("//") or "://" in path:
            raise ValueError(f"a request path must start with '/' and name no other server: {path!r}")
        self._timed_out = threading.Event()
        self._connection = None
        self._watchdog = threading.Timer(client.timeout, self._expire)
        self._watchdog.daemon = True

    def __enter__(self) -> "_Exchange":
        client, request = self.client, self.request
        kind = http.client.HTTPSConnection if client._scheme == "https" else http.client.HTTPConnection
        self._connection = kind(client._host, client._port, timeout=client.timeout)
        self._watchdog.start()
        body = None if request["body"] is None else json.dumps(request["body"], ensure_ascii=False).encode()
        headers = {"Accept": "application/json, text/event-stream", "Connection": "close"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            self._connection.request(request["method"], client._prefix + request["path"], body=body, headers=headers)
            self.response = self._connection.getresponse()
        except Exception as exc:
            self.__exit__(None, None, None)
            raise self._failure(exc, "before the response") from None
        status = self.response.status
        if 300 <= status < 400:
            target = self.response.getheader("Location") or "nowhere named"
            self.__exit__(None, None, None)
            raise ServerError(f"redirect to {target} (status {status}, not followed)", request)
        if status != 200:
            try:
                excerpt = self._excerpt()
            finally:
                self.__exit__(None, None, None)
            raise ServerError(f"status {status}: {excerpt}", request)
        return self

    def __exit__(self, *exc_info) -> None:
        self._watchdog.cancel()
        if self._connection is not None:
            self._connection.close()

    def body(self) -> Iterator[bytes]:
        """The response body in pieces as they arrive; ServerError past the size limit or deadline."""
        total = 0
        while True:
            try:
                data = self.response.read1(READ_SIZE)
            except Exception as exc:
                raise self._failure(exc, f"after {total} bytes of the body") from None
            if self._timed_out.is_set():
                raise ServerError(f"timeout after {self.client.timeout:g} s", self.request)
            if not data:
                if self.response.length:  # the Content-Length promised more
                    raise ServerError(f"connection closed mid-response (after {total} bytes of the body)",
                                      self.request)
                return
            total += len(data)
            if total > self.client.max_body:
                raise ServerError(f"body over {_size(self.client.max_body)}", self.request)
            yield data

    def _excerpt(self) -> str:
        """The first characters of an error body (its first pieces only), its whitespace runs made one
        space so that the error stays one line (a web server's HTML error page has many):
        ``<html>\\n  <body>404</body>`` -> ``<html> <body>404</body>``."""
        data = b""
        try:
            for piece in self.body():
                data += piece
                if len(data) >= 4 * ERROR_EXCERPT:
                    break
        except ServerError:
            pass
        return " ".join(data.decode("utf-8", errors="replace").split())[:ERROR_EXCERPT]

    def _expire(self) -> None:
        self._timed_out.set()
        sock = getattr(self._connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _failure(self, exc: Exception, where: str) -> ServerError:
        if self._timed_out.is_set() or isinstance(exc, (TimeoutError, socket.timeout)):
            return ServerError(f"timeout after {self.client.timeout:g} s", self.request)
        if isinstance(exc, http.client.IncompleteRead):
            return ServerError(f"connection closed mid-response ({where})", self.request)
        if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
            return ServerError(f"cannot connect to {self.client.url}: {type(exc).__name__}", self.request)
        return ServerError(f"connection failed {where}: {type(exc).__name__}: {exc}", self.request)


def _event_data(raw: bytes, index: int, request: dict) -> str | None:
    """The ``data:`` payload of one SSE event (its data lines joined), None for an event without."""
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise ServerError(f"SSE event {index + 1} is not UTF-8 at byte {exc.start}", request) from None
    data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
    return "\n".join(data) if data else None


def _named_event(raw: bytes) -> dict | None:
    """An SSE event's name and comment lines, None for an event without a name:
    ``_named_event(b'event: token_ids\n: "[1]"') == {"event": "token_ids", "comment": '"[1]"'}``."""
    lines = raw.decode("utf-8").split("\n")
    names = [line[6:].strip() for line in lines if line.startswith("event:")]
    comment = "\n".join(line[1:].removeprefix(" ") for line in lines if line.startswith(":"))
    return {"event": names[0], "comment": comment} if names else None


def _parsed(data: bytes | str, where: str, request: dict) -> dict:
    """``data`` read as a JSON object; ServerError naming where it is not one."""
    value = _value(data, where, request)
    if not isinstance(value, dict):
        raise ServerError(f"{where} is JSON {type(value).__name__}, not an object", request)
    return value


def _value(data: bytes | str, where: str, request: dict):
    """``data`` read as JSON; ServerError naming where it is not JSON."""
    try:
        value = json.loads(data)
    except UnicodeDecodeError as exc:
        raise ServerError(f"invalid JSON in {where}: not UTF-8 at byte {exc.start}", request) from None
    except json.JSONDecodeError as exc:
        raise ServerError(f"invalid JSON in {where} at byte {exc.pos}: {exc.msg}", request) from None
    return value


def _size(limit: int) -> str:
    return f"{limit / 2**20:g} MB" if limit >= 2**20 else f"{limit} bytes"

