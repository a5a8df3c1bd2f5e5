"""The HTTP client against a misbehaving server: every misbehaviour is one ServerError naming it,
with the request, within the timeout; only the given URL is contacted."""
from __future__ import annotations

import pytest

from tests.fake_vllm_server import MISBEHAVIOUR_BUGS, REDIRECT_TARGET, FakeVllmServer
from textbound.families.embedded import build_family
from textbound.server.client import ServerClient
from textbound.server.dialect import ServerError

TIMEOUT = 1.0
TOKENIZE = {"prompt": "Hi there"}
STREAM = {"prompt": "Hi", "max_tokens": 4, "stream": True}
# What each misbehaviour is called, for a JSON request and for a stream.
EXPECTED = {
    "hang": ("timeout after 1 s", "timeout after 1 s"),
    "close": ("connection closed mid-response", "connection closed mid-response"),
    "half_event": (None, "half an SSE event"),
    "no_done": (None, "the stream ended after 5 events without data: [DONE]"),
    "status_500": ("status 500: Internal Server Error", "status 500: Internal Server Error"),
    "bad_json": ("invalid JSON in the body at byte", "invalid JSON in SSE event 2 at byte"),
    "huge_body": ("body over 1 MB", "body over 1 MB"),
    "redirect": (f"redirect to {REDIRECT_TARGET}", f"redirect to {REDIRECT_TARGET}"),
}


@pytest.fixture(scope="module")
def family():
    return build_family("qwen")


def test_every_misbehaviour_is_expected():
    assert set(EXPECTED) == MISBEHAVIOUR_BUGS


@pytest.mark.parametrize("bug", sorted(MISBEHAVIOUR_BUGS))
@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
def test_misbehaviour_is_one_server_error(family, bug, streamed):
    expected = EXPECTED[bug][streamed]
    with FakeVllmServer(family, bugs={bug}) as server:
        client = ServerClient(server.url, timeout=TIMEOUT, max_body=2**20)
        if streamed:
            call, path, body = lambda: list(client.stream("/v1/completions", STREAM)), "/v1/completions", STREAM
        else:
            call, path, body = lambda: client.post_json("/tokenize", TOKENIZE), "/tokenize", TOKENIZE
        if expected is None:  # this misbehaviour is a stream's only
            assert call()["tokens"]
            return
        with pytest.raises(ServerError) as raised:
            call()
    assert raised.value.what.startswith(expected), raised.value.what
    assert raised.value.request == {"method": "POST", "path": path, "body": body}


def test_a_clean_server_answers(family):
    with FakeVllmServer(family) as server:
        client = ServerClient(server.url, timeout=TIMEOUT)
        assert client.get_json("/version")["version"]
        assert client.post_json("/detokenize", {"tokens": client.post_json("/tokenize", TOKENIZE)["tokens"]}) \
            == {"prompt": "Hi there"}
        events = list(client.stream("/v1/completions", STREAM))
    assert len(events) == STREAM["max_tokens"] + 1 and events[-1]["choices"][0]["finish_reason"] == "length"


def _read_to_the_end(client: ServerClient) -> tuple[list[dict], str | None]:
    """A stream read with the end event optional: its events and what the stream returned."""
    events = []
    stream = client.stream("/v1/completions", STREAM, done_required=False)
    while True:
        try:
            events.append(next(stream))
        except StopIteration as end:
            return events, end.value


@pytest.mark.parametrize("bugs", [set(), {"no_done"}], ids=["done", "no_done"])
def test_an_optional_end_event_is_read_to_the_end_and_named_when_missing(family, bugs):
    with FakeVllmServer(family, bugs=bugs) as server:
        events, missing = _read_to_the_end(ServerClient(server.url, timeout=TIMEOUT))
    assert len(events) == STREAM["max_tokens"] + 1 and events[-1]["choices"][0]["finish_reason"] == "length"
    assert missing == ("[DONE]" if bugs else None)


def test_an_optional_end_event_still_refuses_half_an_event(family):
    with FakeVllmServer(family, bugs={"half_event"}) as server, pytest.raises(ServerError, match="half an SSE event"):
        _read_to_the_end(ServerClient(server.url, timeout=TIMEOUT))


def test_a_400_names_the_status_and_the_message(family):
    with FakeVllmServer(family) as server, pytest.raises(ServerError) as raised:
        ServerClient(server.url, timeout=TIMEOUT).post_json("/detokenize", {"tokens": [10**9]})
    assert raised.value.what.startswith("status 400: ") and "not token ids" in raised.value.what


def test_nobody_listening_is_a_server_error(family):
    with FakeVllmServer(family) as server:
        url = server.url
    with pytest.raises(ServerError, match="cannot connect"):
        ServerClient(url, timeout=TIMEOUT).get_json("/version")


@pytest.mark.parametrize("path", ["http://elsewhere/v1/models", "v1/models", "//elsewhere/x"])
def test_a_path_cannot_name_another_server(path):
    with pytest.raises(ValueError, match="no other server"):
        ServerClient("http://127.0.0.1:9", timeout=TIMEOUT).get_json(path)


def test_only_http_urls():
    with pytest.raises(ValueError, match="http://host:port"):
        ServerClient("file:///etc/passwd")


def test_a_web_server_that_is_no_model_server_is_one_line(tmp_path):
    # Python's own file server answers /v1/models with a many-line HTML error page
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(ServerError) as raised:
            ServerClient(f"http://127.0.0.1:{server.server_address[1]}", timeout=TIMEOUT).get_json("/v1/models")
    finally:
        server.shutdown()
        server.server_close()
    assert raised.value.what.startswith("status 404: <!DOCTYPE HTML> <html lang=") and "\n" not in str(raised.value)
