"""Property tests of the tools component: Hypothesis draws model outputs in every format
(properties.model_outputs) and splits of them, and the same checks ``textbound check`` runs
(textbound.checks.tools) judge the implementation under test ($TEXTBOUND_IMPL, default impl).
Oracle disagreements (transformers against the whole-text reference) are the report's business,
not the implementation's, so they do not fail these tests."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.families import impl_subject
from textbound.checks import run_check
from textbound.naming.divergence import Case
from textbound.oracles.tool_reference import TOOL_CALL_FORMATS
from textbound.properties.model_outputs import model_outputs

FAMILY = "gpt2"
SETTINGS = settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@st.composite
def split_outputs(draw, fmt: str) -> dict:
    output = draw(model_outputs(fmt))
    length = len(output["text"])
    splits = draw(st.one_of(st.lists(st.integers(0, length), max_size=8).map(sorted),
                            st.just(list(range(1, length)))))
    return {**output, "splits": splits}


@pytest.mark.parametrize("fmt", TOOL_CALL_FORMATS)
def test_tools_properties(fmt: str):
    @given(split_outputs(fmt))
    @SETTINGS
    def holds(given_input: dict):
        for prop in ("whole", "stream", "deltas"):
            found = run_check(impl_subject(FAMILY), Case("tools", prop, FAMILY, given_input))
            if found is not None and not found.kind.startswith("oracle disagreement"):
                pytest.fail(found.describe())
    holds()
