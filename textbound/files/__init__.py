"""Files a run is given, read so that any way one is unusable is one line naming it.

    >>> read_json(Path("baseline.json"), dict)    # doctest: +SKIP
    {'entries': [...]}

A leaf: imports nothing of the harness.
"""
from .jsonl import jsonl_line
from .reading import (MAX_FILE_BYTES, InputFileError, is_present, json_type_name, parse_json, read_json,
                      read_text)

__all__ = ["MAX_FILE_BYTES", "InputFileError", "is_present", "json_type_name", "jsonl_line", "parse_json", "read_json", "read_text"]
