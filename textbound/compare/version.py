"""One side of a comparison: a family folder as the oracles load it.

A folder holds tokenizer.json and tokenizer_config.json, and may hold chat_template.jinja,
generation_config.json and special_tokens_map.json. ``tokenizers`` reads tokenizer.json (ids and
pieces), transformers' generic fast tokenizer the whole folder (special tokens, chat templates),
exactly as the ``check`` command's oracles do.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..files import InputFileError, is_present, read_json


class CompareError(Exception):
    """OLD or NEW cannot be compared (missing, unreadable, refused by the oracles)."""


@dataclass(frozen=True)
class FamilyVersion:
    """A family folder to compare; ``label`` is how reports name it ("old" or "new").

    >>> FamilyVersion("old", Path("models/llama2")).name
    'llama2'
    """

    label: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.resolve().name

    def json_file(self, filename: str) -> dict:
        """A JSON file of the folder, {} when the folder has none."""
        path = self.path / filename
        if not is_present(path):
            return {}
        try:
            return read_json(path)
        except InputFileError as exc:
            raise CompareError(f"{self.label} {exc}") from None

    @cached_property
    def tokenizer_json(self) -> dict:
        return self.json_file("tokenizer.json")

    @cached_property
    def config(self) -> dict:
        return self.json_file("tokenizer_config.json")

    @cached_property
    def generation_config(self) -> dict:
        return self.json_file("generation_config.json")

    @cached_property
    def oracle(self):
        """The `tokenizers` oracle of tokenizer.json."""
        from oracles.tokenizers_oracle import TokenizersOracle
        try:
            return TokenizersOracle.from_dir(self.path)
        except Exception as exc:  # tokenizers refuses the file: name it, no traceback
            raise CompareError(f"{self.label} {self.path / 'tokenizer.json'}: tokenizers cannot load it: {exc}") from None

    @cached_property
    def transformers_tokenizer(self):
        """transformers' tokenizer of the folder (the chat oracle's, so templates and specials agree)."""
        from oracles.chat_oracle import FamilyChatOracle
        try:
            return FamilyChatOracle.of(self.path.resolve()).tokenizer
        except Exception as exc:  # a config transformers refuses is bad input too
            raise CompareError(f"{self.label} {self.path}: transformers cannot load it: {exc}") from None


def load_version(label: str, path: str | Path) -> FamilyVersion:
    """The folder at ``path`` as a FamilyVersion, checked loadable by both oracles."""
    path = Path(path)
    if not path.is_dir():
        raise CompareError(f"{label} {path}: not a folder")
    if not (path / "tokenizer.json").is_file():
        raise CompareError(f"{label} {path}: no tokenizer.json there")
    version = FamilyVersion(label, path)
    # Loaded now, so bad input fails before any case runs.
    for loaded in ("tokenizer_json", "config", "generation_config", "oracle", "transformers_tokenizer"):
        getattr(version, loaded)
    return version
