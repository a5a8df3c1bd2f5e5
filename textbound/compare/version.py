"""One side of a comparison: a family folder as the oracles load it.

A folder holds tokenizer.json and tokenizer_config.json, and may hold chat_template.jinja,
generation_config.json and special_tokens_map.json. A GGUF file stands for the folder transformers
reads out of it (textbound/families/gguf.py), so ``compare model.gguf hf_folder/`` lists what the
file carries differently from the folder it was made from; ``org/name@rev`` stands for that hub
revision's tokenizer files (textbound/families/hub.py). ``tokenizers`` reads tokenizer.json (ids and
pieces), transformers' generic fast tokenizer the whole folder (special tokens, chat templates),
exactly as the ``check`` command's oracles do.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from textbound.oracles.remote import RemoteOracles

from ..families import FamilyError
from ..families.gguf import gguf_family, is_gguf
from ..families.hub import hub_family
from ..families.validate import panic_message_silenced
from ..files import InputFileError, is_present, read_json

# What names a hub repository, optionally at a revision: org/name or org/name@rev.
HUB_REPO = re.compile(r"[\w.-]+/[\w.-]+(@[\w./-]+)?")


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
    gguf: Path | None = None  # the GGUF file the folder was read from
    hub: str | None = None  # the hub repository (and revision) the folder was downloaded from
    remote: RemoteOracles | None = None  # the oracles under other library versions (--oracle-versions)

    @property
    def name(self) -> str:
        name = self.hub or (self.gguf.stem if self.gguf else self.path.resolve().name)
        if self.remote:
            return f"{name} under " + " ".join(f"{package} {v}" for package, v in self.remote.versions.items())
        return name

    @property
    def source(self) -> str:
        """What the user named: the folder, the GGUF file or the hub revision."""
        return self.hub or str(self.gguf or self.path)

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

    def _remote_root(self, name: str, probe: str):
        """The remote oracle ``name``, loaded now by reading ``probe``, so a refusal is bad input here too."""
        root = self.remote.root(name)
        getattr(root, probe)
        return root

    @cached_property
    def oracle(self):
        """The `tokenizers` oracle of tokenizer.json."""
        from textbound.oracles.tokenizers_oracle import TokenizersOracle
        try:
            if self.remote:
                return self._remote_root("oracle", "vocab_size")
            with panic_message_silenced():
                return TokenizersOracle.from_dir(self.path)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - tokenizers refuses the file (a Rust panic too): name it
            raise CompareError(f"{self.label} {self.path / 'tokenizer.json'}: tokenizers cannot load it: {exc}") from None

    @cached_property
    def transformers_tokenizer(self):
        """transformers' tokenizer of the folder (the chat oracle's, so templates and specials agree)."""
        from textbound.oracles.chat_oracle import FamilyChatOracle
        try:
            if self.remote:
                return self._remote_root("transformers_tokenizer", "eos_token_id")
            return FamilyChatOracle.of(self.path.resolve()).tokenizer
        except Exception as exc:  # a config transformers refuses is bad input too
            raise CompareError(f"{self.label} {self.path}: transformers cannot load it: {exc}") from None


def load_version(label: str, path: str | Path, remote: RemoteOracles | None = None) -> FamilyVersion:
    """The folder, GGUF file or hub revision (``org/name@rev``, where no such file or folder exists)
    at ``path`` as a FamilyVersion, checked loadable by both oracles (``remote``'s, when given)."""
    name, path = str(path), Path(path)
    try:
        if is_gguf(path):
            return _loaded(FamilyVersion(label, gguf_family(path).path, gguf=path, remote=remote))
        if not path.exists() and HUB_REPO.fullmatch(name):
            return _loaded(FamilyVersion(label, hub_family(name).path, hub=name, remote=remote))
    except FamilyError as exc:
        raise CompareError(f"{label} {exc}") from None
    if not path.is_dir():
        raise CompareError(f"{label} {path}: neither a folder, a GGUF file nor a hub repository")
    if not (path / "tokenizer.json").is_file():
        raise CompareError(f"{label} {path}: no tokenizer.json there")
    return _loaded(FamilyVersion(label, path, remote=remote))


def _loaded(version: FamilyVersion) -> FamilyVersion:
    # Loaded now, so bad input fails before any case runs.
    for loaded in ("tokenizer_json", "config", "generation_config", "oracle", "transformers_tokenizer"):
        getattr(version, loaded)
    return version
