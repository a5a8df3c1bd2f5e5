"""Chat templates rendered by ``@huggingface/jinja`` (the template engine of transformers.js) as an ``--impl``.

    npm ci --prefix engines/js      # once: the pinned packages into engines/js/node_modules
    textbound check --impl textbound.adapters.hf_jinja --component chat

Only the template engine is swapped, as in textbound.adapters.minijinja_adapter: the request is
prepared and finished as transformers' ``apply_chat_template`` does it (impl.chat.ChatRenderer:
messages copied without None values, reasoning aliased, ``continue_final_message`` tagged and
cut), and the template runs in ``node engines/js/chat_engine.mjs`` (op ``render_template``, over
the JSON-lines protocol of textbound.adapters.jsonl_engine; the engine's clock is the harness's).

transformers.js' own ``apply_chat_template``, which prepares nothing (messages as given,
``continue_final_message`` a mere variable), is the same engine's ``render_chat`` op, checked
through the generic adapter:

    TEXTBOUND_ENGINE_CMD="node engines/js/chat_engine.mjs" \\
        textbound check --impl textbound.adapters.jsonl_engine --component chat

This module also starts the other node engines of engines/js (``node_engine``, used by
textbound.adapters.js_tokenizers): without ``node`` on the PATH or without the installed packages,
reading its ``__version__`` (the harness's setup) raises ``EngineMissing`` saying which command
installs them.

Server entry point: none (transformers.js has no server): here the template engine's
``Template.render`` under transformers' preparation; transformers.js' own ``apply_chat_template``
is engines/js/chat_engine.mjs's ``render_chat``.

    >>> render_chat("{{ messages[0].content }}!", [{"role": "user", "content": "Hi"}])   # doctest: +SKIP
    'Hi!'
"""
from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from . import EngineMissing, engine_path, engines_folder, render_chat_through
from . import jsonl_engine as protocol

JS_ENGINES_DIR = engines_folder() / "js"  # $TEXTBOUND_ENGINES/js, read at import
CHAT_ENGINE = "chat_engine.mjs"
CHAT_PACKAGE = "@huggingface/jinja"


def node_command(script: str, package: str) -> list[str]:
    """``node engines/js/SCRIPT``; EngineMissing when node, the script or the npm package is not there."""
    node = shutil.which("node")
    if node is None:
        raise EngineMissing(f"the JavaScript engines need node on the PATH (to run {script})")
    path = engine_path(JS_ENGINES_DIR / script)
    if not (JS_ENGINES_DIR / "node_modules" / package / "package.json").is_file():
        raise EngineMissing(f"{package} is not installed in {JS_ENGINES_DIR}: run npm ci --prefix {JS_ENGINES_DIR}")
    return [node, str(path)]


def node_engine(script: str, package: str, family: Path | None = None) -> protocol.EngineProcess:
    """The running engine of this process for ``script`` and ``family`` (see protocol.engine)."""
    return protocol.engine(family, command=node_command(script, package))


def engine_description(process) -> str:
    """``"@huggingface/jinja 0.5.11"``: what the engine's hello says it is."""
    return f"{process.hello['engine']} {process.hello['version']}"


def _chat_engine():
    return node_engine(CHAT_ENGINE, CHAT_PACKAGE)


def __getattr__(name: str):
    if name == "__version__":  # read by the harness's setup: starting the engine, a broken one fails it
        return engine_description(_chat_engine())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
