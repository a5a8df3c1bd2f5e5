"""Text the project wrote itself, one file per category, for training and checking tokenizers.

Files are read as UTF-8 with ``newline=""`` so CR, CRLF, NEL, U+2028 and control characters reach
the caller exactly as stored: they are part of what the corpus tests.
"""
from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def corpus_dir() -> Path:
    """The directory holding ``text/`` and ``tokenizer_specs/``."""
    return Path(__file__).resolve().parent


@cache
def _read_text_files() -> tuple[tuple[str, str], ...]:
    texts = []
    for path in sorted((corpus_dir() / "text").glob("*.txt")):
        with path.open(encoding="utf-8", newline="") as file:
            texts.append((path.stem, file.read()))
    return tuple(texts)


def text_files() -> dict[str, str]:
    """Category name (the file's stem) to its full text, in name order."""
    return dict(_read_text_files())


def split_lines(text: str) -> list[str]:
    """``text`` cut after each "\\n", which stays with its line; a final unterminated line is kept."""
    return _LINE.findall(text)


def text_cases(max_len: int = 256) -> list[tuple[str, str]]:
    """(category, snippet) pairs: each file cut into runs of whole lines, then each file whole.

    A snippet gathers consecutive lines while it stays within ``max_len`` characters; a single line
    longer than that is a snippet by itself. Lines end after "\\n" only, and keep it, so "\\r",
    "\\r\\n", U+0085 and U+2028 stay inside the snippets they occur in.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be positive, got {max_len}")
    cases: list[tuple[str, str]] = []
    files = _read_text_files()
    for category, text in files:
        snippet = ""
        for line in split_lines(text):
            if snippet and len(snippet) + len(line) > max_len:
                cases.append((category, snippet))
                snippet = ""
            snippet += line
        if snippet:
            cases.append((category, snippet))
    cases.extend(files)
    return cases


def server_parser_tests() -> dict:
    """The servers' own tool-call parser tests as data: ``{"about", "sources", "cases"}``, each case
    ``{"id", "source", "test", "format", "text", "expected", ...}`` with the options impl's
    parse_response takes (``tools``, ``reasoning``, ``starts_in_reasoning``) where the test sets them.
    ``expected`` holds only what the test asserts: ``calls`` ([{"name", "arguments"}]),
    ``call_names`` (names only), ``content``, ``reasoning_content``.

    >>> case = next(c for c in server_parser_tests()["cases"] if c["format"] == "mistral")
    >>> case["source"], case["expected"]
    ('vllm/mistral', {'calls': [], 'content': 'This is a test'})
    """
    with (corpus_dir() / "server_parser_tests" / "cases.json").open(encoding="utf-8") as file:
        return json.load(file)
