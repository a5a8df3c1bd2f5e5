"""Which families a run checks: those ``--family``, ``--model-dir`` and ``--hub`` name, or, with
none of them, every family of the sources in the default run.

    >>> [family.name for family in resolve(["gpt2"], [], [])]
    ['gpt2']
"""
from __future__ import annotations

from .family import NAMED_FAMILIES, Family, FamilyError
from .folders import folder_family
from .hub import hub_family
from .validate import check_family_files


def resolve(family_names: list[str], model_dirs: list[str], hub_repos: list[str]) -> list[Family]:
    """What ``--family``/``--model-dir``/``--hub`` name, source by source; with none of them, every
    embedded family plus each family under $TEXTBOUND_MODELS. Each family's files are checked
    usable (textbound.families.validate), so a broken one fails the setup before any case."""
    families = _named(family_names, model_dirs, hub_repos)
    for family in families:
        check_family_files(family)
    return families


def _named(family_names: list[str], model_dirs: list[str], hub_repos: list[str]) -> list[Family]:
    if not (family_names or model_dirs or hub_repos):
        return [source.family(name) for source in NAMED_FAMILIES if source.in_default_run for name in source.names()]
    known = [(source, source.names()) for source in NAMED_FAMILIES]
    unknown = [name for name in family_names if not any(name in names for _, names in known)]
    if unknown:
        raise FamilyError(f"unknown family {', '.join(unknown)}"
                          + "".join(f" ({hint})" for source, _ in known if (hint := source.hint()))
                          + "".join(f"; {source.label}: {', '.join(names)}" for source, names in known if names))
    return [source.family(name) for source, names in known for name in family_names if name in names] \
        + [folder_family(path) for path in model_dirs] + [hub_family(repo) for repo in hub_repos]
