"""Families in folders: each subfolder of the models folder ($TEXTBOUND_MODELS) that holds a
tokenizer.json, named after the subfolder, and a user's folder named by ``--model-dir``.

    >>> [family.name for family in folder_families(models_dir())]    # doctest: +SKIP
    ['llama3', 'qwen2', ...]
"""
from __future__ import annotations

import os
from pathlib import Path

from ..files import InputFileError, is_present, read_json
from .family import Family, FamilyError, NamedFamilies, named_families
from .gguf import gguf_family, is_gguf

MODELS_ENV = "TEXTBOUND_MODELS"


def models_dir() -> Path | None:
    value = os.environ.get(MODELS_ENV)
    return Path(value) if value else None


def folder_families(root: Path) -> list[Family]:
    """Each subfolder of ``root`` holding a tokenizer.json is a family named after the subfolder."""
    if not root.is_dir():
        raise FamilyError(f"${MODELS_ENV}={root}: not a folder")
    return [Family(p.name, p, "models") for p in sorted(root.iterdir()) if (p / "tokenizer.json").is_file()]


def folder_family(path: str | Path) -> Family:
    """The family in the folder ``path``, or in the GGUF file ``path`` names (families/gguf.py)."""
    path = Path(path)
    if is_gguf(path):
        return gguf_family(path)
    if not path.is_dir():
        raise FamilyError(f"--model-dir {path}: not a folder")
    if not is_present(path / "tokenizer.json"):
        raise FamilyError(f"--model-dir {path}: no tokenizer.json there")  # one that is unusable is named later
    return Family(path.resolve().name, path, "folder")


def models_family_names() -> list[str]:
    """The families under $TEXTBOUND_MODELS (none when it is not set)."""
    root = models_dir()
    return [family.name for family in folder_families(root)] if root else []


def models_family(name: str) -> Family:
    return Family(name, models_dir() / name, "models")


def _models_hint() -> str | None:
    return None if models_dir() else f"set ${MODELS_ENV} to reach a models folder"


def folder_model_type(folder: Path) -> str:
    """The model type the family folder's tokenizer.json names (``"BPE"``); a file that cannot say is
    named with what is wrong (``"unreadable: llama2/tokenizer.json: no such file"``), as a listing shows it."""
    try:
        model = read_json(Path(folder) / "tokenizer.json").get("model")
    except InputFileError as exc:
        return f"unreadable: {exc}"
    kind = model.get("type") if isinstance(model, dict) else None
    return kind if isinstance(kind, str) else "unreadable: tokenizer.json: $.model.type: expected a string"


named_families(NamedFamilies(f"in ${MODELS_ENV}", models_family_names, models_family, in_default_run=True,
                             model_type=lambda name: folder_model_type(models_dir() / name), hint=_models_hint))
