"""Where families come from: embedded (trained by us), a models folder, a user's folder, the hub."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MODELS_ENV = "TEXTBOUND_MODELS"
TEMPLATES_ENV = "TEXTBOUND_TEMPLATES"
HUB_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"]


class FamilyError(Exception):
    """A family could not be found or built; the run cannot be set up."""


@dataclass(frozen=True)
class Family:
    name: str
    path: Path
    origin: str  # "embedded", "models", "mistral", "folder", "hub" or "fuzz"


def models_dir() -> Path | None:
    value = os.environ.get(MODELS_ENV)
    return Path(value) if value else None


def folder_families(root: Path, origin: str = "models") -> list[Family]:
    """Each subfolder of ``root`` holding a tokenizer.json is a family named after the subfolder."""
    if not root.is_dir():
        raise FamilyError(f"${MODELS_ENV}={root}: not a folder")
    return [Family(p.name, p, origin) for p in sorted(root.iterdir()) if (p / "tokenizer.json").is_file()]


def folder_family(path: str | Path) -> Family:
    path = Path(path)
    if not (path / "tokenizer.json").is_file():
        raise FamilyError(f"--model-dir {path}: no tokenizer.json there")
    return Family(path.resolve().name, path, "folder")


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


def embedded_families(names: list[str] | None = None) -> list[Family]:
    from .families import build_family, embedded_family_names
    known = embedded_family_names()
    for name in names or []:
        if name not in known:
            raise FamilyError(f"unknown family {name!r} (embedded: {', '.join(known)})")
    return [Family(n, build_family(n), "embedded") for n in (names or known)]


def resolve(family_names: list[str], model_dirs: list[str], hub_repos: list[str]) -> list[Family]:
    """What ``--family``/``--model-dir``/``--hub`` name; with none of them, every embedded family
    plus each family under $TEXTBOUND_MODELS."""
    if not (family_names or model_dirs or hub_repos):
        root = models_dir()
        return embedded_families() + (folder_families(root) if root else [])
    from .families import embedded_family_names
    from .mistral_families import mistral_family, mistral_family_names
    shared = {f.name: f for f in folder_families(models_dir())} if models_dir() else {}
    embedded = [n for n in family_names if n in embedded_family_names()]
    # Converted from mistral-common's vocabularies on first use; named only, never in the default run.
    mistral = [n for n in family_names if n in mistral_family_names()]
    unknown = [n for n in family_names if n not in embedded and n not in shared and n not in mistral]
    if unknown:
        hint = "" if models_dir() else f" (set ${MODELS_ENV} to reach a models folder)"
        raise FamilyError(f"unknown family {', '.join(unknown)}{hint}; embedded: {', '.join(embedded_family_names())}"
                          + (f"; in ${MODELS_ENV}: {', '.join(shared)}" if shared else "")
                          + (f"; from mistral-common: {', '.join(mistral_family_names())}" if mistral_family_names() else ""))
    return (embedded_families(embedded) if embedded else []) + [shared[n] for n in family_names if n in shared] \
        + [mistral_family(n) for n in mistral] + [folder_family(d) for d in model_dirs] + [hub_family(r) for r in hub_repos]
