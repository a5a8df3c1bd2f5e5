"""The baseline: known divergences, each with a reason.

An entry names a root cause (``textbound baseline --from`` writes one per root cause of a run: its
name, its signatures, the families it was seen on) or a single signature (as baselines were
written before root causes; such entries still read). A divergence is known when an entry's
families hold its family ("*" for any) and the entry covers its signature: a signature entry its
own; a root-cause entry each of its signatures and every signature a run groups with them (the same
bug seen by another property, or in another character class) or names as the same root cause.
An entry whose family and component were checked but which matched nothing is reported as fixed,
so baselines get pruned instead of going silently stale.

    {"entries": [{"root_cause": "detokenizer_unfinished_released", "families": ["gpt2"],
                  "signatures": ["detokenizer/stream/shown a byte run otherwise than the whole decode"],
                  "reason": "vLLM's streams show U+FFFD for emoji (vllm#1234)"},
                 {"signature": "tokenizer/encode/ids: drops tokens at the end", "family": "*", "reason": "..."}]}
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..files import InputFileError, read_json
from .divergence import Divergence
from .root_causes import RootCause, cause_by_signature

ANY_FAMILY = "*"


@dataclass(frozen=True)
class BaselineEntry:
    """A signature entry (``signature`` on ``family``), or a root-cause entry (``root_cause`` with its
    ``signatures`` on ``families``)."""

    signature: str
    family: str
    reason: str
    root_cause: str | None = None
    signatures: tuple[str, ...] = ()
    families: tuple[str, ...] = ()

    @property
    def covered(self) -> tuple[str, ...]:
        return self.signatures if self.root_cause else (self.signature,)

    @property
    def on(self) -> tuple[str, ...]:
        """The families the entry holds (ANY_FAMILY for any)."""
        return (self.families or (ANY_FAMILY,)) if self.root_cause else (self.family,)

    @property
    def components(self) -> set[str]:
        return {signature.split("/", 1)[0] for signature in self.covered}

    def matches(self, divergence: Divergence, cause: RootCause | None = None) -> bool:
        """Whether the entry knows ``divergence``, whose run groups it into ``cause``."""
        if not (ANY_FAMILY in self.on or divergence.case.family in self.on):
            return False
        if divergence.signature in self.covered:
            return True
        return bool(self.root_cause and cause and (cause.name == self.root_cause
                                                   or set(cause.signatures) & set(self.signatures)))

    def to_json(self) -> dict:
        """The entry as a baseline file (and summary.json's "fixed") holds it."""
        if self.root_cause:
            return {"root_cause": self.root_cause, "signatures": list(self.signatures), "families": list(self.on),
                    "reason": self.reason}
        return {"signature": self.signature, "family": self.family, "reason": self.reason}

    @property
    def label(self) -> str:
        """``"`tokenizer/encode/x` on gpt2"``, ``"root cause `stops_within_delta` (2 signatures) on *"``."""
        if self.root_cause:
            return f"root cause `{self.root_cause}` ({len(self.signatures)} signature(s)) on {', '.join(self.on)}"
        return f"`{self.signature}` on {self.family}"

    @classmethod
    def from_json(cls, entry: object, where: str = "entry") -> "BaselineEntry":
        """An entry of a baseline file; one that is neither kind raises BaselineError naming ``where``."""
        def strings(name: str) -> tuple[str, ...] | None:
            value = entry.get(name)
            return tuple(value) if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value) \
                else None

        if not isinstance(entry, dict):
            raise BaselineError(f"{where} needs a non-empty 'signature' and 'reason' (or 'root_cause', 'signatures' "
                                f"and 'reason')")
        reason = entry.get("reason") if isinstance(entry.get("reason"), str) and entry.get("reason") else None
        if "root_cause" in entry:
            signatures, families = strings("signatures"), strings("families") if "families" in entry else (ANY_FAMILY,)
            if not isinstance(entry["root_cause"], str) or not entry["root_cause"] or signatures is None \
                    or families is None or reason is None:
                raise BaselineError(f"{where}: a root-cause entry needs a non-empty 'root_cause', 'signatures' (a list "
                                    f"of signatures), 'reason' and, if given, 'families' (a list of family names)")
            return cls("", ANY_FAMILY, reason, entry["root_cause"], signatures, families)
        if not isinstance(entry.get("signature"), str) or not entry["signature"] or reason is None:
            raise BaselineError(f"{where} needs a non-empty 'signature' and 'reason'")
        return cls(entry["signature"], entry.get("family", ANY_FAMILY), reason)


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
    return [BaselineEntry.from_json(entry, f"{path}: entries[{index}]") for index, entry in enumerate(entries)]


def baseline_of(causes: list[dict], source: str, reason: str | None = None) -> dict:
    """A baseline with one entry per root cause of a run (summary.json's ``root_causes``); without
    ``reason``, each entry says where it was seen and its smallest input:

        >>> baseline_of([{"name": "x", "signatures": [{"signature": "tokenizer/encode/x", "cases": 1}],
        ...               "families": {"gpt2": 1}, "cases": 1, "smallest": {"minimized_input": {"text": "a"}}}],
        ...             "reports/runs/1")["entries"][0]["reason"]
        'seen in reports/runs/1: 1 divergence(s), 1 signature(s), smallest input {"text": "a"}'
    """
    entries = []
    for cause in causes:
        smallest = json.dumps(cause["smallest"].get("minimized_input"), ensure_ascii=False)
        signatures = [s["signature"] for s in cause["signatures"]]
        entries.append(BaselineEntry(
            "", ANY_FAMILY, reason or f"seen in {source}: {cause['cases']} divergence(s), {len(signatures)} "
                                      f"signature(s), smallest input {smallest}",
            cause["name"], tuple(signatures), tuple(sorted(cause["families"]))).to_json())
    return {"entries": entries}


def checked_by(entry: BaselineEntry, checked: set[tuple[str, str]]) -> bool:
    """True when a run that checked these (family, component) pairs could have matched ``entry``."""
    return any(c in entry.components and (ANY_FAMILY in entry.on or f in entry.on) for f, c in checked)


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
          errors: list[str] = (), causes: list[RootCause] = ()) -> Verdict:
    """Splits what was found into new and known, and finds the entries that no longer diverge;
    ``causes`` are the run's root causes, which root-cause entries are matched by.

    Oracle disagreements are neither new nor known: they say nothing about impl (the report lists
    them apart).
    """
    new, known, used = set(), set(), set()
    cause_of = cause_by_signature(causes)
    for divergence in (d for d in found if not d.is_oracle_disagreement):
        match = next((e for e in entries if e.matches(divergence, cause_of.get(divergence.signature))), None)
        (new if match is None else known).add((divergence.case.family, divergence.signature))
        if match is not None:
            used.add(match)
    fixed = [e.to_json() for e in entries if e not in used and checked_by(e, checked)]
    return Verdict(new_in=sorted(map(list, new)), known_in=sorted(map(list, known)), fixed=fixed, errors=list(errors))
