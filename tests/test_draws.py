"""draw_examples draws from the seed alone: not from the literals of the modules that happen to be
imported, which Hypothesis otherwise mixes in (a checkout's for an editable install, none for a
wheel), so a run checks the same cases however textbound is installed."""
from __future__ import annotations

import importlib
import sys

from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers

from textbound.properties.strategies import draw_examples

PLANTED = "planted_literals"  # a module of the user's own code to Hypothesis: outside site-packages and tests/
STRATEGY = st.tuples(st.integers(), st.text(max_size=6), st.floats(allow_nan=False))


def test_a_literal_planted_in_a_local_module_changes_no_drawn_case(tmp_path, monkeypatch):
    literals = [*(1_000_003 + 7 * i for i in range(60)), *(f"planted{i}" for i in range(60)),
                *(0.5 + i for i in range(60))]
    (tmp_path / f"{PLANTED}.py").write_text(f"LITERALS = {literals!r}\n", encoding="utf-8")
    before = repr(draw_examples(STRATEGY, 300, 7))  # repr: -0.0 and 0.0 told apart

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, PLANTED, importlib.import_module(PLANTED))  # gone again after the test
    # Hypothesis takes the planted literals for the user's own: outside draw_examples it mixes them in.
    assert {1_000_003, "planted0", 0.5} <= set(providers._get_local_constants())

    assert repr(draw_examples(STRATEGY, 300, 7)) == before
    assert 1_000_003 in providers._get_local_constants().integers  # restored for the tests Hypothesis runs
