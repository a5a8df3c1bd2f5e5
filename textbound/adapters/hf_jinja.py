"""Chat templates rendered by ``@huggingface/jinja`` (the template engine of transformers.js) as an ``--impl``.

    npm ci --prefix engines/js      # once: the pinned packages into engines/js/node_modules
    textbound check --impl textbound.adapters.hf_jinja --component chat

Only the template engine is swapped, as in textbound.adapters.minijinja_adapter: the request is
prepared and finished as transformers' ``apply_chat_template`` does it (impl.chat.ChatRenderer:
messages copied without None values, reasoning aliased, ``continue_final_message`` tagged and
cut), and the template runs in ``node engines/js/chat_engine.mjs`` (op ``render_template``, over
the JSON-lines protocol of textbound.adapters.subprocess; the engine's clock is the harness's).

transformers.js' own ``apply_chat_template``, which prepares nothing (messages as given,
``continue_final_message`` a mere variable), is the same engine's ``render_chat`` op, checked
through the generic adapter:

    TEXTBOUND_ENGINE_CMD="node engines/js/chat_engine.mjs" \\
        textbound check --impl textbound.adapters.subprocess --component chat

This module also starts the other node engines of engines/js (``node_engine``, used by
textbound.adapters.js_tokenizers): without ``node`` on the PATH or without the installed packages,
importing it raises ``EngineMissing`` saying which command installs them.

    >>> render_chat("{{ messages[0].content }}!", [{"role": "user", "content": "Hi"}])   # doctest: +SKIP
    'Hi!'
"""
from __future__ import annotations

import atexit
import os
import shlex
import shutil
from datetime import datetime
from pathlib import Path


from . import EngineMissing, render_chat_through

ENGINE_CMD_ENV = "TEXTBOUND_ENGINE_CMD"  # subprocess.ENGINE_CMD_ENV, which cannot be imported before it is set
JS_ENGINES_DIR = Path(__file__).resolve().parents[2] / "engines" / "js"
CHAT_ENGINE = "chat_engine.mjs"
CHAT_PACKAGE = "@huggingface/jinja"

# Engines of this process, by script and family folder (None: family-less); keyed by process id
# too, so that a forked worker starts its own rather than writing into its parent's pipes.
_NODE_ENGINES: dict = {}  # (pid, script, family) -> subprocess.EngineProcess
_LOAD_ERRORS: dict = {}  # (pid, script, family) -> (exception class, arguments) of a refused load


def protocol():
    """textbound.adapters.subprocess, imported. Importing it starts the engine $TEXTBOUND_ENGINE_CMD
    names (and fails without one): unless one is set, it is given the chat engine's command for the
    import (one idle process more), so that its EngineProcess serves the engines of engines/js."""
    if ENGINE_CMD_ENV in os.environ:
        from . import subprocess
        return subprocess
    os.environ[ENGINE_CMD_ENV] = shlex.join(node_command(CHAT_ENGINE, CHAT_PACKAGE))
    try:
        from . import subprocess
    finally:
        del os.environ[ENGINE_CMD_ENV]
    return subprocess


def node_command(script: str, package: str) -> list[str]:
    """``node engines/js/SCRIPT``; EngineMissing when node or the npm package is not installed."""
    node = shutil.which("node")
    if node is None:
        raise EngineMissing(f"the JavaScript engines need node on the PATH (to run {script})")
    if not (JS_ENGINES_DIR / "node_modules" / package / "package.json").is_file():
        raise EngineMissing(f"{package} is not installed in {JS_ENGINES_DIR}: run npm ci --prefix {JS_ENGINES_DIR}")
    return [node, str(JS_ENGINES_DIR / script)]


def node_engine(script: str, package: str, family: Path | None = None):
    """The running engine of this process for ``script`` and ``family`` (started again if it died).

    A family the engine cannot load is refused again without a new process: the error is kept
    (the checks ask for a family's tokenizer once per case)."""
    key = (os.getpid(), script, Path(family).resolve() if family is not None else None)
    if key in _LOAD_ERRORS:
        kind, arguments = _LOAD_ERRORS[key]
        raise kind(*arguments)
    running = _NODE_ENGINES.get(key)
    if running is None or not running.alive:
        protocol_module = protocol()
        running = protocol_module.EngineProcess(node_command(script, package))
        if family is not None:
            try:
                running.request("load", timeout=protocol_module.HANDSHAKE_SECONDS, path=str(key[2]))
            except Exception as exc:
                running.close()  # a process per refused request would pile up
                if not isinstance(exc, protocol_module.EngineFailure):  # a crash may not happen again
                    _LOAD_ERRORS[key] = (type(exc), exc.args)
                raise
        _NODE_ENGINES[key] = running
    return running


@atexit.register
def _close_node_engines() -> None:
    for (pid, _, _), running in list(_NODE_ENGINES.items()):
        if pid == os.getpid():
            running.close()


def engine_description(process) -> str:
    """``"@huggingface/jinja 0.5.11"``: what the engine's hello says it is."""
    return f"{process.hello['engine']} {process.hello['version']}"


def _chat_engine():
    return node_engine(CHAT_ENGINE, CHAT_PACKAGE)


__version__ = engine_description(_chat_engine())  # importing starts the engine: a broken one fails the setup


class NodeJinjaEnvironment:
    """What impl.chat.ChatRenderer needs of an environment (compile, render), in the node engine."""

    def compile(self, source: str) -> str:
        if not isinstance(source, str):
            raise TypeError(f"a chat template is a str, not {type(source).__name__}")
        return source  # the engine parses each source once, when first rendered

    def render(self, source: str, context: dict) -> str:
        # now: the harness's clock (the checks freeze it), which the engine's strftime_now reads
        return _chat_engine().request("render_template", template=source, context=context,
                                      now=datetime.now().isoformat())


render_chat = render_chat_through(NodeJinjaEnvironment())
