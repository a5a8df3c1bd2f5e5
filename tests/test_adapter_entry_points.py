"""Every adapter under textbound/adapters/ and every engine script under engines/ names, on a line
beginning ``Server entry point:``, the calls its engine's own server makes (or, for an engine with
no server, the caller it follows): a finding made below that entry point may be the adapter's.
A structural check, reading files only.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from textbound.adapters import SERVER_ENTRY_POINT

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "textbound" / "adapters"
ENGINES = ROOT / "engines"
# Modules of textbound/adapters that wrap no engine: the package, the contract, the skeleton
# `textbound init` starts from, and the server of any --impl module.
INFRASTRUCTURE = {"__init__.py", "contract.py", "skeleton.py", "serve.py"}
# The engine side of the JSON-lines protocol, shared by the scripts beside it.
PROTOCOL_LOOPS = {"vllm/protocol_loop.py", "js/protocol.mjs"}


def header(path: Path) -> str:
    """A Python file's module docstring, or a JavaScript module's leading ``//`` comment block."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return ast.get_docstring(ast.parse(text)) or ""
    comments = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        comments.append(line.removeprefix("//").strip())
    return "\n".join(comments)


def entry_point(header_text: str) -> str | None:
    """What the header's SERVER_ENTRY_POINT paragraph names: None without one, '' when it names nothing.

    >>> entry_point("Adapter.\\n\\nServer entry point: ``Parser.parse``\\nwith ids.\\n\\nMore.")
    '``Parser.parse`` with ids.'
    """
    lines = header_text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(SERVER_ENTRY_POINT)), None)
    if start is None:
        return None
    paragraph = []
    for line in lines[start:]:
        if not line.strip():
            break
        paragraph.append(line.strip())
    return " ".join(paragraph).removeprefix(SERVER_ENTRY_POINT).strip()


def adapter_modules() -> list[Path]:
    return sorted(p for p in ADAPTERS.glob("*.py") if p.name not in INFRASTRUCTURE)


def engine_scripts() -> list[Path]:
    return sorted(p for p in [*ENGINES.rglob("*.py"), *ENGINES.rglob("*.mjs")]
                  if "node_modules" not in p.parts and p.relative_to(ENGINES).as_posix() not in PROTOCOL_LOOPS)


def unnamed(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths if not entry_point(header(p))]


def test_the_files_checked_include_the_known_adapters_and_engine_scripts():
    assert {"vllm.py", "sglang.py", "tokenizers_adapter.py", "server.py"} <= {p.name for p in adapter_modules()}
    assert {"vllm/engine.py", "sglang/engine.py", "js/chat_engine.mjs"} <= {
        p.relative_to(ENGINES).as_posix() for p in engine_scripts()}


def test_every_adapter_names_its_servers_entry_point():
    assert unnamed(adapter_modules()) == [], f"add a '{SERVER_ENTRY_POINT}' paragraph to their docstrings"


def test_every_engine_script_names_its_servers_entry_point():
    assert unnamed(engine_scripts()) == [], f"add a '{SERVER_ENTRY_POINT}' paragraph to their headers"


@pytest.mark.parametrize(("source", "named"), [
    ('"""An adapter."""\n', False),
    ('"""An adapter.\n\nServer entry point:\n\nMore."""\n', False),
    ('"""An adapter.\n\nServer entry point: ``Parser.parse``."""\n', True),
])
def test_a_module_without_a_named_entry_point_is_listed(tmp_path, source, named):
    module = tmp_path / "engine_adapter.py"
    module.write_text(source, encoding="utf-8")
    assert bool(entry_point(header(module))) is named


def test_a_scripts_comment_header_is_read_up_to_its_code(tmp_path):
    script = tmp_path / "engine.mjs"
    script.write_text("// An engine.\n//\n// Server entry point: `apply_chat_template`.\nimport x from 'y';\n"
                      "// Server entry point: not in the header\n", encoding="utf-8")
    assert entry_point(header(script)) == "`apply_chat_template`."
    script.write_text("// An engine.\nimport x from 'y';\n// Server entry point: below the header\n", encoding="utf-8")
    assert entry_point(header(script)) is None


@pytest.mark.parametrize("jsonl", [False, True])
def test_the_skeleton_textbound_init_writes_asks_for_the_entry_point(tmp_path, jsonl):
    from textbound.adapters.skeleton import MARK, Skeleton
    written = tmp_path / "adapter.py"
    written.write_text(Skeleton(("tools",), jsonl=jsonl, out=tmp_path).text(), encoding="utf-8")
    assert entry_point(header(written)).startswith(MARK)
