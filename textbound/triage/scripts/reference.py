"""The reference's side of a check, asked on the minimized tokenizer.json a script holds: what the
makers that need a tokenizer compute EXPECTED with (tokenizers, as the checks' oracle)."""
from __future__ import annotations

import json
from pathlib import Path

from textbound.oracles.tokenizers_oracle import TokenizersOracle

from ...checks import Subject, oracle_call
from .registry import ScriptPlan, Unscripted


def oracle_subject(plan: ScriptPlan) -> Subject:
    """The checks' Subject with the oracle on the plan's minimized tokenizer.json (and no implementation):
    the reference's side of a check, asked on the file the script holds."""
    subject = Subject(plan.case.family, Path(), None)
    subject.__dict__["oracle"] = TokenizersOracle.from_str(json.dumps(plan.spec))  # the cached_property, given
    return subject


def reference_decode(plan: ScriptPlan, ids: list[int], skip_special_tokens: bool) -> str:
    """The oracle's whole decode of ``ids`` on the minimized file (Unscripted where it raises): on a
    byte-level file holding "Ġ" (220) and "t" (83), ``reference_decode(plan, [220, 83], False) == " t"``."""
    text, error = oracle_call(lambda: oracle_subject(plan).oracle.decode(ids, skip_special_tokens))
    if error:
        raise Unscripted(f"the reference cannot decode the ids: {error}")
    return text
