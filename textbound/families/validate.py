"""A family's files checked once, before any case: a truncated or misshapen file is one setup
error naming the file, the JSON path where known and what is wrong, not a traceback of the oracle
nor a divergence of every case.

tokenizer.json must be a JSON object the oracle (`tokenizers`) loads; when it refuses one, the
first node of the shapes it needs that has another type names where (its own message gives only a
line and column). tokenizer_config.json, special_tokens_map.json and generation_config.json, when
present, must be JSON objects, and chat_template.jinja UTF-8 text.

    >>> check_family_files(Family("broken", Path("broken"), "folder"))  # model.vocab a list  # doctest: +SKIP
    Traceback (most recent call last):
    textbound.families.family.FamilyError: broken/tokenizer.json: $.model.vocab: expected an object, found an array (tokenizers: invalid type: sequence, expected a map at line 1 column 1260283)
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..files import InputFileError, is_present, json_type_name, parse_json, read_json, read_text
from .family import Family, FamilyError

OPTIONAL_JSON_OBJECTS = ("tokenizer_config.json", "special_tokens_map.json", "generation_config.json")
OPTIONAL_TEXTS = ("chat_template.jinja",)
PIPELINE_STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
# The model types whose vocabulary is an object (token -> id); Unigram's is an array of [piece, score].
VOCAB_OBJECT_MODELS = ("BPE", "WordPiece", "WordLevel")


def check_family_files(family: Family) -> None:
    """Raises FamilyError, one line, for the first unusable file of ``family``'s folder."""
    try:
        _check_tokenizer_json(family.path / "tokenizer.json")
        for filename in OPTIONAL_JSON_OBJECTS:
            if is_present(family.path / filename):
                read_json(family.path / filename)
        for filename in OPTIONAL_TEXTS:
            if is_present(family.path / filename):
                read_text(family.path / filename)
    except InputFileError as exc:
        raise FamilyError(f"family {family.name}: {exc}") from None


def _check_tokenizer_json(path: Path) -> None:
    import tokenizers

    text = read_text(path)
    try:
        with panic_message_silenced():
            tokenizers.Tokenizer.from_str(text)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the oracle's refusal, a Rust panic too, means no case can run
        data = parse_json(text, str(path))  # JSON's own errors first: they say what a truncation is
        raise InputFileError(f"{path}: {misshapen_node(data) or 'tokenizers cannot load it'} (tokenizers: {exc})") \
            from None


@contextmanager
def panic_message_silenced() -> Iterator[None]:
    """File descriptor 2 sent to the null device for the duration: a Rust panic (tokenizers on a
    merge whose token is not in the vocab) prints its message, and with RUST_BACKTRACE a backtrace,
    there before it is raised; the raised exception carries the message, which the error line gives."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def misshapen_node(data: dict) -> str | None:
    """The first node of a tokenizer.json's outline with a type the oracle cannot take, as
    ``$.path: expected ..., found ...``; None when the outline is fine (the fault is deeper):
    ``misshapen_node({"model": {"type": "BPE", "vocab": []}}) == "$.model.vocab: expected an object, found an array"``."""
    shapes: list[tuple[str, object, tuple[type, ...]]] = [("$.model", data.get("model"), (dict,))]
    shapes += [(f"$.{stage}", data.get(stage), (dict, type(None))) for stage in PIPELINE_STAGES]
    shapes += [("$.added_tokens", data.get("added_tokens", []), (list,))]
    model = data.get("model")
    if isinstance(model, dict):
        if "vocab" in model:
            vocab_type = dict if model.get("type") in VOCAB_OBJECT_MODELS else list if model.get("type") == "Unigram" \
                else None
            if vocab_type:
                shapes.append(("$.model.vocab", model["vocab"], (vocab_type,)))
        if model.get("type") == "BPE" and "merges" in model:
            shapes.append(("$.model.merges", model["merges"], (list,)))
    for where, node, expected in shapes:
        if not isinstance(node, expected):
            names = " or ".join(json_type_name(kind()) for kind in expected)
            return f"{where}: expected {names}, found {json_type_name(node)}"
    return None
