"""Behaviour changes between two versions, grouped by signature, and the --allow file that accepts some.

A change's signature is ``component/kind`` ("tokenizer/encode: different tokens", "chat/render: text
differs"); its subject says what changed (a token, a template, a setting). Cases that show the same
signature on the same subject are one change, counted, with the smallest examples kept.

An --allow file has the baseline's form (``{"entries": [{"signature": ..., "reason": ...}]}``);
an entry's optional ``family`` field names the change's subject, "*" (the default) any subject.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..naming.baseline import BaselineEntry
from ..shrinking.minimize import MAX_TRIES

# Minimized examples kept per change; the other cases that show it are counted.
EXAMPLES_KEPT = 3


@dataclass
class Change:
    """One behaviour change: what OLD and NEW do for the smallest input that shows it.

    >>> Change("tokenizer", "vocab: entries removed", "2 entries", ["a"], None).check
    'vocab'
    """

    component: str
    kind: str
    subject: str
    old: Any
    new: Any
    example: Any = None  # the minimized input, as JSON data (None: a setting, no input needed)
    cases: int = 1
    more_examples: list = field(default_factory=list)
    allowed: str | None = None  # the --allow entry's reason

    @property
    def signature(self) -> str:
        return f"{self.component}/{self.kind}"

    @property
    def check(self) -> str:
        """The property whose cases showed it: a kind starts with it ("encode: different pieces")."""
        return self.kind.split(":", 1)[0]

    def as_dict(self) -> dict:
        return {"signature": self.signature, "component": self.component, "kind": self.kind,
                "subject": self.subject, "old": self.old, "new": self.new, "example": self.example,
                "more_examples": self.more_examples, "cases": self.cases, "allowed": self.allowed}


class Changes:
    """The changes found so far, merged by signature and subject, and the cases run per property."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], Change] = {}
        self.cases: dict[tuple[str, str], int] = {}  # (component, property) -> cases run

    def ran(self, component: str, prop: str, count: int = 1) -> None:
        self.cases[(component, prop)] = self.cases.get((component, prop), 0) + count

    def add(self, change: Change) -> Change:
        """Adds ``change``, or counts it (and keeps its example) on the change already listed."""
        key = (change.signature, change.subject)
        known = self.by_key.get(key)
        if known is None:
            self.by_key[key] = change
            return change
        known.cases += change.cases
        example = json.dumps(change.example, ensure_ascii=False, sort_keys=True)
        kept = [json.dumps(e, ensure_ascii=False, sort_keys=True) for e in [known.example, *known.more_examples]]
        if change.example is not None and example not in kept and len(kept) < EXAMPLES_KEPT:
            known.more_examples.append(change.example)
        return known

    def examples_wanted(self, signature: str, subject: str) -> bool:
        """Whether another minimized example of this change is worth its minimization."""
        known = self.by_key.get((signature, subject))
        return known is None or 1 + len(known.more_examples) < EXAMPLES_KEPT

    def listed(self) -> list[Change]:
        return sorted(self.by_key.values(), key=lambda c: (c.component, c.kind, c.subject))


def within_tries(predicate: Callable[[Any], bool], tries: int = MAX_TRIES) -> Callable[[Any], bool]:
    """``predicate``, answering False once it has been asked ``tries`` times (bounds a shrink).

    >>> ask = within_tries(lambda v: True, 2); [ask(0), ask(0), ask(0)]
    [True, True, False]
    """
    asked = 0

    def bounded(value: Any) -> bool:
        nonlocal asked
        asked += 1
        return asked <= tries and predicate(value)
    return bounded


def apply_allow(changes: list[Change], entries: list[BaselineEntry]) -> list[dict]:
    """Marks the changes an entry allows; returns the entries that allowed nothing (to prune)."""
    used = set()
    for change in changes:
        entry = next((e for e in entries if e.signature == change.signature and e.family in ("*", change.subject)),
                     None)
        if entry is not None:
            change.allowed = entry.reason
            used.add(entry)
    return [{"signature": e.signature, "family": e.family, "reason": e.reason} for e in entries if e not in used]
