"""A server under test, started here and always stopped here: on 127.0.0.1, on a free port; and the
llama.cpp ``llama-server`` it is most often, built once from the llama-cpp-python sdist's source.

``running_server(plan)`` starts ``plan.argv`` (``{port}`` in it replaced by a free port), polls
``GET /health`` until it answers 200, yields the server's URL and, however the block ends, stops it
(terminate, then kill after a grace period). A server that exits first or is not healthy in time
raises ``LaunchError``: one line naming the command and how it failed, then the tail of its log.

``build_llama_server()`` builds only the ``llama-server`` target of llama-cpp-python
``LLAMA_CPP_PYTHON_VERSION``'s ``vendor/llama.cpp`` (cmake, CPU only, no network code, no web UI)
under ``$TEXTBOUND_CACHE/llama_cpp/server-<version>``; ``llama_server_binary()`` finds it there or at
``$TEXTBOUND_LLAMA_SERVER``. ``llama_server_plan(binary, model)`` is the command serving a GGUF;
``llama_cpp_python_plan(python, model)`` the same GGUF served by llama-cpp-python's own server.

    >>> plan = llama_server_plan(llama_server_binary(), tiny_model_path)      # doctest: +SKIP
    >>> with running_server(plan) as url:                                     # doctest: +SKIP
    ...     url
    'http://127.0.0.1:40123'
"""
from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from textbound.oracles import MissingExtra

from .llama_cpp_source import cache_dir, extract_source

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
SERVER_ENV = "TEXTBOUND_LLAMA_SERVER"
HOST = "127.0.0.1"
HEALTH_PATH = "/health"
MODELS_PATH = "/v1/models"  # the readiness of a server without /health
PORT_PLACEHOLDER = "{port}"
URL_PLACEHOLDER = "{url}"  # in a command run while a server serves (run_while_serving)
LOG_TAIL_LINES = 15
BUILD_JOBS = 2
# CPU only and nothing fetched at build or run time: no curl/OpenSSL, no prebuilt web UI download.
CMAKE_OPTIONS = ("-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DGGML_NATIVE=OFF",
                 "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_BUILD_TESTS=OFF",
                 "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF", "-DBUILD_SHARED_LIBS=OFF",
                 "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON")
SERVER_TARGET = "llama-server"


class LaunchError(RuntimeError):
    """A server that could not be started, built or reached healthy; the message is one line, then
    the tail of its log."""


@dataclass(frozen=True)
class LaunchPlan:
    """How to start a server: ``argv`` with ``{port}`` where the port goes, how long it may take to
    answer ``GET health_path`` with 200 (a server without /health is polled at an endpoint it
    answers once its model is loaded), and how long it gets to exit once terminated.

    >>> LaunchPlan(("python", "-m", "http.server", "{port}")).startup_timeout
    120.0
    """

    argv: tuple[str, ...]
    startup_timeout: float = 120.0
    stop_grace: float = 10.0
    poll_interval: float = 0.2
    health_path: str = HEALTH_PATH
    ready_marker: str = ""  # text the 200 answer must hold, for a server that answers before its model is served
    # More (path, marker) pairs that must answer so too: a server whose parts get ready one by one
    also_ready: tuple[tuple[str, str], ...] = ()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


@contextmanager
def running_server(plan: LaunchPlan) -> Iterator[str]:
    """The URL of ``plan``'s server while the block runs; the server is stopped when it ends."""
    port = free_port()
    argv = [part.replace(PORT_PLACEHOLDER, str(port)) for part in plan.argv]
    with tempfile.TemporaryFile(mode="w+b") as log:
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        except OSError as error:
            raise LaunchError(f"cannot start {argv[0]}: {error}") from None
        try:
            _wait_healthy(process, port, plan, log)
            yield f"http://{HOST}:{port}"
        finally:
            _stop(process, plan.stop_grace)


def run_while_serving(plan: LaunchPlan, command: list[str]) -> int:
    """Runs ``command`` (``{url}`` in it replaced by the server's URL) while ``plan``'s server serves;
    its exit status, 0 for no command. The server is stopped however the command ends."""
    with running_server(plan) as url:
        print(f"serving {plan.argv[0]} at {url}", file=sys.stderr, flush=True)
        command = [part.replace(URL_PLACEHOLDER, url) for part in command]
        return subprocess.run(command).returncode if command else 0


def _wait_healthy(process: subprocess.Popen, port: int, plan: LaunchPlan, log) -> None:
    deadline = time.monotonic() + plan.startup_timeout
    while True:
        if process.poll() is not None:
            raise LaunchError(f"{plan.argv[0]} exited with status {process.returncode} before answering "
                              f"GET {plan.health_path}{_tail(log)}")
        if _healthy(port, plan):
            return
        if time.monotonic() > deadline:
            raise LaunchError(f"{plan.argv[0]} did not answer GET {plan.health_path} with 200 within "
                              f"{plan.startup_timeout:g} s{_tail(log)}")
        time.sleep(plan.poll_interval)


def _healthy(port: int, plan: LaunchPlan) -> bool:
    return all(_answers(port, path, marker)
               for path, marker in ((plan.health_path, plan.ready_marker), *plan.also_ready))


def _answers(port: int, path: str, marker: str) -> bool:
    connection = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status == 200 and marker.encode("utf-8") in answer.read()
    except OSError:  # not listening yet, or it closed the connection while loading
        return False
    finally:
        connection.close()


def _tail(log) -> str:
    log.flush()
    log.seek(0)
    lines = log.read().decode("utf-8", "replace").splitlines()[-LOG_TAIL_LINES:]
    return "".join(f"\n  | {line}" for line in lines) or "\n  (its log is empty)"


def _stop(process: subprocess.Popen, grace: float) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _build_dir() -> Path:
    return cache_dir() / f"server-{LLAMA_CPP_PYTHON_VERSION}"


def server_source() -> Path:
    """The sdist's vendor/llama.cpp the server is built from (fetched once): its converter and
    gguf-py make the vocabulary GGUFs of the models it serves."""
    return extract_source(LLAMA_CPP_PYTHON_VERSION, _build_dir() / "source")


def llama_server_binary() -> Path | None:
    """``$TEXTBOUND_LLAMA_SERVER`` if set, else the cached build's binary, else None (not built)."""
    if os.environ.get(SERVER_ENV):
        return Path(os.environ[SERVER_ENV])
    binary = _build_dir() / "build" / "bin" / SERVER_TARGET
    return binary if binary.is_file() else None


def build_llama_server(jobs: int = BUILD_JOBS) -> Path:
    """The llama-server binary, configured and built on first use (tens of minutes on two cores;
    cmake's output goes to build.log beside the build). LaunchError with its tail if cmake fails."""
    source, build = server_source(), _build_dir() / "build"
    binary = build / "bin" / SERVER_TARGET
    if binary.is_file():
        return binary
    build.mkdir(parents=True, exist_ok=True)
    with (build.parent / "build.log").open("w+b") as log:
        for step in (["cmake", "-S", str(source), "-B", str(build), *CMAKE_OPTIONS],
                     ["cmake", "--build", str(build), "--target", SERVER_TARGET, f"-j{jobs}"]):
            if subprocess.run(step, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
                raise LaunchError(f"building {SERVER_TARGET} failed at: {' '.join(step)}{_tail(log)}")
    return binary


def llama_server_plan(binary: Path, model: Path, *, context: int = 4096) -> LaunchPlan:
    """llama-server serving the GGUF ``model``: one slot and one thread (the machine's cores are
    shared), Jinja chat templates (for tools and template kwargs), no web UI.

    >>> llama_server_plan(Path("llama-server"), Path("m.gguf")).argv[:3]
    ('llama-server', '-m', 'm.gguf')
    """
    return LaunchPlan((str(binary), "-m", str(model), "--host", HOST, "--port", PORT_PLACEHOLDER,
                       "-c", str(context), "-np", "1", "-t", "1", "--jinja", "--no-webui", "--no-warmup"))


def tiny_model(family: Path) -> Path:
    """The tiny GGUF of the family folder ``family``: its vocabulary converted by the server's own
    source (textbound.server.tiny_model); LaunchError naming what is missing to write it."""
    from .llama_cpp_source import vocab_gguf
    from .tiny_model import tiny_gguf
    try:
        return tiny_gguf(vocab_gguf(family, LLAMA_CPP_PYTHON_VERSION, server_source()))
    except MissingExtra as exc:
        raise LaunchError(f"the tiny model of {family}: {exc}") from exc


def tiny_model_plan(binary: Path, family: Path) -> LaunchPlan:
    """llama-server at ``binary`` serving the tiny model of the family folder ``family``."""
    return llama_server_plan(binary, tiny_model(family))


def llama_cpp_python_plan(python: Path, model: Path, *, context: int = 4096) -> LaunchPlan:
    """llama-cpp-python's own server, ``python -m llama_cpp.server`` run by ``python`` (an environment
    holding ``llama-cpp-python[server]``), serving the GGUF ``model`` with one thread. It has no
    /health: uvicorn starts once the model is loaded, so ``GET /v1/models`` answering is readiness.

    >>> llama_cpp_python_plan(Path("python"), Path("m.gguf")).argv[:4]
    ('python', '-m', 'llama_cpp.server', '--model')
    """
    return LaunchPlan((str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", HOST,
                       "--port", PORT_PLACEHOLDER, "--n_ctx", str(context), "--n_threads", "1",
                       "--n_threads_batch", "1"), health_path=MODELS_PATH)


def transformers_serve_plan(python: Path, model: Path) -> LaunchPlan:
    """transformers' own OpenAI server (``transformers serve``, run by the ``python`` of an environment
    holding transformers[serving] and torch) serving the model folder ``model`` and no other, on the CPU.

    >>> transformers_serve_plan(Path("env/bin/python"), Path("tiny")).argv[:4]
    ('env/bin/python', '-m', 'transformers.cli.transformers', 'serve')
    """
    return LaunchPlan((str(python), "-m", "transformers.cli.transformers", "serve", str(model),
                       "--host", HOST, "--port", PORT_PLACEHOLDER, "--device", "cpu", "--log-level", "warning"))
