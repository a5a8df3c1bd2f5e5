"""One JSON-lines record per line, whatever characters its strings hold.

``json.dumps(..., ensure_ascii=False)`` leaves U+0085, U+2028 and U+2029 raw, and ``str.splitlines``
(as every reader of a ``.jsonl`` in Python is tempted to use) breaks a line at each of them, so a
record holding one would read back as two broken halves. Escaping those three keeps a record one line
for any reader, and the JSON is the same value.

    >>> jsonl_line({"text": "a\\u2028b"})
    '{"text": "a\\\\u2028b"}'
"""
from __future__ import annotations

import json

LINE_BREAKS_JSON_KEEPS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def jsonl_line(value: object) -> str:
    """``value`` as one line of JSON (no newline at the end) that no line splitter breaks."""
    text = json.dumps(value, ensure_ascii=False)
    for char, escape in LINE_BREAKS_JSON_KEEPS.items():
        text = text.replace(char, escape)
    return text
