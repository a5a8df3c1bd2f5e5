"""Families from the Hugging Face hub, named by ``--hub REPO`` or ``REPO@REVISION`` (a branch, tag or
commit): a repository's tokenizer files only.

    >>> hub_family("Qwen/Qwen2.5-0.5B-Instruct").name    # doctest: +SKIP
    'Qwen--Qwen2.5-0.5B-Instruct'
    >>> hub_family("Qwen/Qwen2.5-0.5B-Instruct@7ae5576").name    # doctest: +SKIP
    'Qwen--Qwen2.5-0.5B-Instruct@7ae5576'
    >>> split_revision("org/name@v1.0"), split_revision("org/name")
    (('org/name', 'v1.0'), ('org/name', None))
"""
from __future__ import annotations

from pathlib import Path

from .family import Family, FamilyError

HUB_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"]


def split_revision(name: str) -> tuple[str, str | None]:
    """``org/name@rev`` -> (``org/name``, ``rev``); no ``@``: no revision (the default branch)."""
    repo, at, revision = name.partition("@")
    return repo, (revision if at else None)


def hub_family(repo: str, cache_dir: Path | None = None) -> Family:
    """A family from the Hugging Face hub: its tokenizer files only, downloaded once and cached.

    ``repo`` may name a revision (``org/name@rev``), and may also be a local folder laid out like a
    hub snapshot, which is how this is tested.
    """
    local = Path(repo)
    if local.is_dir():
        return Family(local.resolve().name, local, "hub")
    repo_id, revision = split_revision(repo)
    if not repo_id or revision == "":
        raise FamilyError(f"--hub {repo}: expected ORG/NAME or ORG/NAME@REVISION")
    try:
        from huggingface_hub import snapshot_download
        path = snapshot_download(repo_id=repo_id, revision=revision, allow_patterns=HUB_FILES, cache_dir=cache_dir)
    except Exception as exc:  # network, auth, unknown repo or revision: all mean this family cannot be had
        raise FamilyError(f"--hub {repo}: cannot download: {type(exc).__name__}: {exc}") from exc
    return Family(repo.replace("/", "--"), Path(path), "hub")
