"""Families from the Hugging Face hub, named by ``--hub REPO``: a repository's tokenizer files only.

    >>> hub_family("Qwen/Qwen2.5-0.5B-Instruct").name    # doctest: +SKIP
    'Qwen--Qwen2.5-0.5B-Instruct'
"""
from __future__ import annotations

from pathlib import Path

from .family import Family, FamilyError

HUB_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"]


def hub_family(repo: str, cache_dir: Path | None = None) -> Family:
    """A family from the Hugging Face hub: its tokenizer files only, downloaded once and cached.

    ``repo`` may also be a local folder laid out like a hub snapshot, which is how this is tested.
    """
    local = Path(repo)
    if local.is_dir():
        return Family(local.resolve().name, local, "hub")
    try:
        from huggingface_hub import snapshot_download
        path = snapshot_download(repo_id=repo, allow_patterns=HUB_FILES, cache_dir=cache_dir)
    except Exception as exc:  # network, auth, unknown repo: all mean this family cannot be had
        raise FamilyError(f"--hub {repo}: cannot download: {type(exc).__name__}: {exc}") from exc
    return Family(repo.replace("/", "--"), Path(path), "hub")
