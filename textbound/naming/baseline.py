"""The baseline: known divergences, each with a reason.

A divergence whose signature (and family, unless the entry says "*") is listed is known and does not
fail the gate. An entry whose family and component were checked but which matched nothing is
reported as fixed, so baselines get pruned instead of going silently stale.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..files import InputFileError, read_json
from .divergence import Divergence, is_oracle_disagreement


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


def load_baseline(path: Path | None, option: str = "--baseline") -> list[BaselineEntry]:
    """The entries of the baseline at ``path`` (none without one); ``option`` names it in an error
    (compare reads its --allow file as a baseline)."""
    if path is None:
        return []
    try:
        data = read_json(Path(path))
    except InputFileError as exc:
        raise BaselineError(f"{option} {exc}") from None
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise BaselineError(f'{path}: expected {{"entries": [...]}}')
    result = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("signature", "reason")):
            raise BaselineError(f"{path}: entries[{index}] needs a non-empty 'signature' and 'reason'")
        result.append(BaselineEntry(entry["signature"], entry.get("family", "*"), entry["reason"]))
    return result


def baseline_of(records: list[dict], source: str, reason: str | None = None) -> dict:
    """A baseline listing each (family, signature) of a run's records, oracle disagreements left
    out (they are never impl's); without ``reason``, each entry says where it was seen and its
    smallest input:

        >>> baseline_of([{"family": "gpt2", "signature": "tokenizer/encode/x", "minimized_input": {"text": "a"}}],
        ...             "reports/runs/1")["entries"][0]["reason"]
        'seen in reports/runs/1: 1 divergence(s), smallest input {"text": "a"}'
    """
    seen: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        if not is_oracle_disagreement(record["signature"]):
            seen.setdefault((record["family"], record["signature"]), []).append(record)
    entries = []
    for (family, signature), found in sorted(seen.items(), key=lambda item: (item[0][1], item[0][0])):
        smallest = min((json.dumps(r.get("minimized_input"), ensure_ascii=False) for r in found), key=len)
        entries.append({"signature": signature, "family": family,
                        "reason": reason or f"seen in {source}: {len(found)} divergence(s), smallest input {smallest}"})
    return {"entries": entries}


def checked_by(entry: BaselineEntry, checked: set[tuple[str, str]]) -> bool:
    """True when a run that checked these (family, component) pairs could have matched ``entry``."""
    return any(c == entry.component and entry.family in ("*", f) for f, c in checked)


@dataclass(frozen=True)
class Verdict:
    """A run judged against the baseline, as summary.json states it.

    ``new_in`` and ``known_in`` are the [family, signature] pairs impl diverges on, outside and
    inside the baseline (an entry may baseline a signature on one family only); ``new`` and
    ``known`` their signatures. ``fixed`` are the entries that matched nothing on what was checked.
    Harness errors (``errors``, as the notes word them) fail the gate as new signatures do, since a
    component that could not be checked proves nothing. ``seconds`` and ``slowest_case`` are what
    the gate line reports of the run beside its verdict.

        >>> verdict = Verdict(new_in=[["gpt2", "tokenizer/encode/x"]], known_in=[], fixed=[])
        >>> verdict.new, verdict.failed
        (['tokenizer/encode/x'], True)
    """

    new_in: list[list[str]]
    known_in: list[list[str]]
    fixed: list[dict]
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    slowest_case: dict = field(default_factory=lambda: {"seconds": 0.0})

    @property
    def new(self) -> list[str]:
        return sorted({signature for _, signature in self.new_in})

    @property
    def known(self) -> list[str]:
        return sorted({signature for _, signature in self.known_in})

    @property
    def failed(self) -> bool:
        """True when the gate fails: a new signature, or a harness error."""
        return bool(self.new or self.errors)

    def summary_fields(self) -> dict:
        """The verdict's part of summary.json, in its order."""
        return {"new": self.new, "known": self.known, "fixed": self.fixed, "new_in": self.new_in,
                "known_in": self.known_in, "seconds": self.seconds, "errors": self.errors,
                "slowest_case": self.slowest_case}


def judge(entries: list[BaselineEntry], found: list[Divergence], checked: set[tuple[str, str]],
          errors: list[str] = ()) -> Verdict:
    """Splits what was found into new and known, and finds the entries that no longer diverge.

    Oracle disagreements are neither new nor known: they say nothing about impl (the report lists
    them apart).
    """
    new, known, used = set(), set(), set()
    for divergence in (d for d in found if not d.is_oracle_disagreement):
        match = next((e for e in entries if e.matches(divergence)), None)
        (new if match is None else known).add((divergence.case.family, divergence.signature))
        if match is not None:
            used.add(match)
    fixed = [{"signature": e.signature, "family": e.family, "reason": e.reason}
             for e in entries if e not in used and checked_by(e, checked)]
    return Verdict(new_in=sorted(map(list, new)), known_in=sorted(map(list, known)), fixed=fixed, errors=list(errors))
