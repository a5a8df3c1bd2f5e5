"""A family's files checked once, before any case: a truncated or misshapen file is one setup
error naming the file, the JSON path where known and what is wrong, not a traceback of the oracle
nor a divergence of every case.

tokenizer.json must be a JSON object the oracle (`tokenizers`) loads; when it refuses one, the
first node of the shapes it needs that has another type names where (its own message gives only a
line and column). tokenizer_config.json, special_tokens_map.json and generation_config.json, when
present, must be JSON objects (the first two with special-token fields and chat templates of the
types transformers takes: it raises at load on others), and chat_template.jinja UTF-8 text.

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
# The files whose special-token fields and chat templates transformers reads (a wrong type there
# makes it raise at load, which no case would survive).
CONFIGS_WITH_SPECIALS = ("tokenizer_config.json", "special_tokens_map.json")
TOKEN_OBJECT = {True: 'an AddedToken object ("__type": "AddedToken", a string content)',
                False: "an object with a string content"}
UNMARKED = ' without "__type": "AddedToken"'
SPECIAL_TOKEN_FIELDS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
PIPELINE_STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
# The model types whose vocabulary is an object (token -> id); Unigram's is an array of [piece, score].
VOCAB_OBJECT_MODELS = ("BPE", "WordPiece", "WordLevel")


def check_family_files(family: Family) -> None:
    """Raises FamilyError, one line, for the first unusable file of ``family``'s folder."""
    try:
        _check_tokenizer_json(family.path / "tokenizer.json")
        for filename in OPTIONAL_JSON_OBJECTS:
            if is_present(family.path / filename):
                data = read_json(family.path / filename)
                if filename in CONFIGS_WITH_SPECIALS and (problem := misshapen_config(data, filename)):
                    raise InputFileError(f"{family.path / filename}: {problem}")
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


def misshapen_config(data: dict, filename: str) -> str | None:
    """The first special-token field or chat template of a tokenizer_config.json (or
    special_tokens_map.json) of a type transformers cannot take, as ``$.path: expected ..., found
    ...``; None when all are fine: ``misshapen_config({"chat_template": 5}, "tokenizer_config.json")
    == "$.chat_template: expected a string or an array of {name, template} objects, found a number"``.
    transformers takes a token as an object in tokenizer_config.json only marked ``"__type":
    "AddedToken"``, in special_tokens_map.json with its content alone."""
    marked = filename == "tokenizer_config.json"
    def is_token(value) -> bool:  # a string, or an AddedToken's fields (marked as one in tokenizer_config.json)
        return value is None or isinstance(value, str) or (
            isinstance(value, dict) and isinstance(value.get("content"), str)
            and (not marked or value.get("__type") == "AddedToken"))

    for name in SPECIAL_TOKEN_FIELDS:
        if name in data and not is_token(data[name]):
            return (f"$.{name}: expected a string, {TOKEN_OBJECT[marked]} or null, found "
                    f"{json_type_name(data[name])}{UNMARKED if marked and isinstance(data[name], dict) else ''}")
    extra = data.get("additional_special_tokens", [])
    if not isinstance(extra, list):
        return f"$.additional_special_tokens: expected an array, found {json_type_name(extra)}"
    for index, token in enumerate(extra):
        if not is_token(token) or token is None:
            return (f"$.additional_special_tokens[{index}]: expected a string or {TOKEN_OBJECT[marked]}, "
                    f"found {json_type_name(token)}")
    template = data.get("chat_template")
    if template is None or isinstance(template, str):
        return None
    if not isinstance(template, list):
        return (f"$.chat_template: expected a string or an array of {{name, template}} objects, "
                f"found {json_type_name(template)}")
    for index, named in enumerate(template):
        if not isinstance(named, dict):
            return (f"$.chat_template[{index}]: expected an object with a name and a template, "
                    f"found {json_type_name(named)}")
        for key in ("name", "template"):
            if not isinstance(named.get(key), str):
                found = json_type_name(named[key]) if key in named else "nothing"
                return f"$.chat_template[{index}].{key}: expected a string, found {found}"
    return None


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
