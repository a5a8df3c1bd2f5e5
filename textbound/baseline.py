"""The baseline: known divergences, each with a reason.

A divergence whose signature (and family, unless the entry says "*") is listed is known and does not
fail the gate. An entry whose family and component were checked but which matched nothing is
reported as fixed, so baselines get pruned instead of going silently stale.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .divergence import Divergence


@dataclass(frozen=True)
class BaselineEntry:
    signature: str
    family: str
    reason: str

    @property
    def component(self) -> str:
        return self.signature.split("/", 1)[0]

    def matches(self, divergence: Divergence) -> bool:
        return self.signature == divergence.signature and self.family in ("*", divergence.case.family)


class BaselineError(ValueError):
    pass


def load_baseline(path: Path | None) -> list[BaselineEntry]:
    if path is None:
        return []
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BaselineError(f'{path}: expected {{"entries": [...]}}')
    result = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("signature", "reason")):
            raise BaselineError(f"{path}: entries[{index}] needs a non-empty 'signature' and 'reason'")
        result.append(BaselineEntry(entry["signature"], entry.get("family", "*"), entry["reason"]))
    return result


def checked_by(entry: BaselineEntry, checked: set[tuple[str, str]]) -> bool:
    """True when a run that checked these (family, component) pairs could have matched ``entry``."""
    return any(c == entry.component and entry.family in ("*", f) for f, c in checked)


def judge(entries: list[BaselineEntry], found: list[Divergence], checked: set[tuple[str, str]]) -> dict:
    """Splits what was found into new and known, and finds the entries that no longer diverge.

    ``new`` and ``known`` are signatures; ``new_in`` and ``known_in`` the [family, signature] pairs
    behind them, since an entry may baseline a signature on one family only. Oracle disagreements
    are neither: they say nothing about impl (the report lists them apart).
    """
    new, known, used = set(), set(), set()
    for divergence in (d for d in found if not d.is_oracle_disagreement):
        match = next((e for e in entries if e.matches(divergence)), None)
        (new if match is None else known).add((divergence.case.family, divergence.signature))
        if match is not None:
            used.add(match)
    fixed = [{"signature": e.signature, "family": e.family, "reason": e.reason}
             for e in entries if e not in used and checked_by(e, checked)]
    return {"new": sorted({s for _, s in new}), "known": sorted({s for _, s in known}), "fixed": fixed,
            "new_in": sorted(map(list, new)), "known_in": sorted(map(list, known))}
