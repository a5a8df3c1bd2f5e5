"""Every adapter under textbound/adapters/ and every engine script under engines/ names, on a line
beginning ``Server entry point:``, the calls its engine's own server makes (or, for an engine with
no server, the caller it follows): a finding made below that entry point may be the adapter's.
Every reproducer of an engine in SERVER_PATHS drives that engine through its server's own module
(imports it and calls one of its serving methods), not the parsers by hand.
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
REPRODUCERS = ROOT / "reports" / "field" / "reproducers"
# Modules of textbound/adapters that wrap no engine: the package, the contract, the skeleton
# `textbound init` starts from, and the server of any --impl module.
INFRASTRUCTURE = {"__init__.py", "contract.py", "skeleton.py", "serve.py"}
# The engine side of the JSON-lines protocol, shared by the scripts beside it.
PROTOCOL_LOOPS = {"vllm/protocol_loop.py", "js/protocol.mjs"}
# A reproducer's file-name prefix -> (the module of the engine's server, the methods of it that
# answer a request: one of them must be called).
SERVER_PATHS = {
    "sglang_": ("sglang.srt.entrypoints.openai.serving_chat",
                {"_generate_chat_stream", "_generate_stream_content", "_process_reasoning_stream",
                 "_process_tool_call_stream", "_check_for_unstreamed_tool_args",
                 "_handle_non_streaming_request", "_build_chat_response"}),
}


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


def bypasses_the_server(path: Path, module: str, methods: set[str]) -> bool:
    """Whether a reproducer never imports `module` or never calls one of its `methods`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    called = {node.func.attr for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    return module not in imported or not called & methods


def test_the_files_checked_include_the_known_adapters_and_engine_scripts():
    assert {"vllm.py", "sglang.py", "tokenizers_adapter.py", "server.py"} <= {p.name for p in adapter_modules()}
    assert {"vllm/engine.py", "sglang/engine.py", "js/chat_engine.mjs"} <= {
        p.relative_to(ENGINES).as_posix() for p in engine_scripts()}


def test_every_adapter_names_its_servers_entry_point():
    assert unnamed(adapter_modules()) == [], f"add a '{SERVER_ENTRY_POINT}' paragraph to their docstrings"


def test_every_engine_script_names_its_servers_entry_point():
    assert unnamed(engine_scripts()) == [], f"add a '{SERVER_ENTRY_POINT}' paragraph to their headers"


@pytest.mark.parametrize("prefix", sorted(SERVER_PATHS))
def test_every_reproducer_drives_its_engine_through_the_servers_module(prefix):
    module, methods = SERVER_PATHS[prefix]
    reproducers = sorted(REPRODUCERS.glob(f"{prefix}*.py"))
    assert reproducers, f"no reproducer named {prefix}*.py under {REPRODUCERS.relative_to(ROOT)}"
    bypassing = [p.name for p in reproducers if bypasses_the_server(p, module, methods)]
    assert bypassing == [], f"drive them through {module}'s serving methods, not the parsers by hand"


@pytest.mark.parametrize(("source", "bypasses"), [
    # The parsers called by hand, as the SGLang reproducers once did.
    ("from sglang.srt.parser.reasoning_parser import ReasoningParser\n"
     "ReasoningParser('qwen3').parse_stream_chunk('a')\n", True),
    # The server's module imported for a type alone.
    ("from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat\nOpenAIServingChat.mro()\n", True),
    ("from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat\n"
     "server = object.__new__(OpenAIServingChat)\nserver._generate_chat_stream(None, None, None)\n", False),
    ("import sglang.srt.entrypoints.openai.serving_chat as chat\n"
     "chat.OpenAIServingChat._check_for_unstreamed_tool_args(None, None, None, None, 0, created=0)\n", False),
])
def test_a_reproducer_that_calls_the_parsers_by_hand_is_listed(tmp_path, source, bypasses):
    reproducer = tmp_path / "sglang_example.py"
    reproducer.write_text(source, encoding="utf-8")
    assert bypasses_the_server(reproducer, *SERVER_PATHS["sglang_"]) is bypasses


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
