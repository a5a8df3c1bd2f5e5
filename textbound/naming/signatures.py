"""Records grouped by signature: the unit a baseline, a report and the triage count in.

    >>> [(g.signature, len(g.records)) for g in signature_groups([{"signature": "a"}, {"signature": "b"},
    ...                                                           {"signature": "a"}])]
    [('a', 2), ('b', 1)]
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from .divergence import is_oracle_disagreement


def input_size(record: dict) -> int:
    return len(json.dumps(record.get("minimized_input"), ensure_ascii=False))


def is_minimized(record: dict) -> bool:
    """Whether a record's example went through minimization (or had nothing to shrink): a record
    the worker found after its allowance, or whose shrinking hung or crashed, says so in
    ``first_difference.minimization``."""
    return "minimization" not in (record.get("first_difference") or {})


def smallest_record(records) -> dict:
    """The record with the smallest example, among the minimized ones where any is:
    ``smallest_record([{"minimized_input": "ab"}, {"minimized_input": "a", "first_difference":
    {"minimization": "not minimized: ..."}}])["minimized_input"] == "ab"``."""
    records = list(records)
    return min([r for r in records if is_minimized(r)] or records, key=input_size)


@dataclass
class SignatureGroup:
    """Every record of one root-cause signature."""

    signature: str
    records: list[dict]
    new: bool = False

    @property
    def families(self) -> Counter:
        return Counter(r["family"] for r in self.records)

    @property
    def smallest(self) -> dict:
        """The smallest example, a minimized one wherever the signature has one."""
        return smallest_record(self.records)


def split_records(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """impl's divergences, and the oracle disagreements (two references disagree; reported apart)."""
    disagreements = [r for r in records if is_oracle_disagreement(r["signature"])]
    return [r for r in records if not is_oracle_disagreement(r["signature"])], disagreements


def signature_groups(records: list[dict], new: set[str] = frozenset()) -> list[SignatureGroup]:
    """Records grouped by signature, the most frequent first."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(record["signature"], []).append(record)
    return sorted((SignatureGroup(s, rs, s in new) for s, rs in groups.items()),
                  key=lambda g: (-len(g.records), g.signature))
