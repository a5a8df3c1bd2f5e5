"""Reading a file the run was given (a family's tokenizer files, a baseline, a report's records):
every way it can be unusable (missing, a folder, a symlink loop, too large, not UTF-8, empty, not
JSON, JSON of the wrong type) is one InputFileError naming the file and what is wrong.

    >>> read_json(Path("tokenizer_config.json"))        # a file holding '{"bos_token": "<s>"'
    Traceback (most recent call last):
    textbound.files.reading.InputFileError: tokenizer_config.json: not valid JSON: line 1 column 20: Expecting ',' delimiter
"""
from __future__ import annotations

import json
from pathlib import Path

# Larger than any real tokenizer file (the largest hub tokenizer.json are some hundred MB), small
# enough that a wrong file (a model's weights, /dev/zero) is refused before it is read.
MAX_FILE_BYTES = 1 << 30
JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
                   bool: "true or false", type(None): "null"}


class InputFileError(ValueError):
    """A file the run was given cannot be used; its text is the one line to print."""


def json_type_name(value: object) -> str:
    """``json_type_name([1]) == "an array"``: a JSON value's type in the words of JSON."""
    return JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def is_present(path: Path) -> bool:
    """Whether a file is there to be read, or to fail reading: a dangling or looping link counts,
    so that it is reported, not taken for an absent optional file."""
    return path.exists() or path.is_symlink()


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``: ``read_text(Path("a folder"))`` raises ``a folder: a folder, not a file``."""
    try:
        size = path.stat().st_size  # follows symlinks, so a loop fails here
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read: {exc.strerror}") from None
    if path.is_dir():
        raise InputFileError(f"{path}: a folder, not a file")
    if size > MAX_FILE_BYTES:
        raise InputFileError(f"{path}: {size} bytes, more than the {MAX_FILE_BYTES} a file read may have")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None


def parse_json(text: str, where: str, expected: type = dict):
    """``text`` as JSON of type ``expected``; ``where`` names it in the error:
    ``parse_json("[]", "case")`` raises ``case: $: expected an object, found an array``."""
    if not text.strip():
        raise InputFileError(f"{where}: empty, expected JSON")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{where}: not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputFileError(f"{where}: not usable JSON: nested too deeply") from None
    if not isinstance(data, expected):
        raise InputFileError(f"{where}: $: expected {json_type_name(expected())}, found {json_type_name(data)}")
    return data


def read_json(path: Path, expected: type = dict):
    """The JSON value of the file ``path``, which must be of type ``expected`` (an object by default)."""
    return parse_json(read_text(path), str(path), expected)
