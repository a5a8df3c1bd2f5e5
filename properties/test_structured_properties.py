"""Property tests of the structured component: Hypothesis draws schemas (properties/schemas.py),
and every comparison is made by run_check, so pytest and ``textbound check`` agree on what a
divergence is. Corpus tools are sampled; generated schemas shrink to the smallest failing one.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.families import family_path, implementation
from textbound.checks import Subject, run_check
from textbound.naming.divergence import Case
from textbound.properties.schemas import schemas, tool_corpus, tool_schemas

FAMILY = "gpt2"
EXAMPLES = settings(max_examples=3, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))  # run_check draws with Hypothesis inside
SCHEMA_PROPERTIES = ("sound", "complete", "differential")


def _subject() -> Subject:
    try:
        implementation().json_schema_to_regex({"type": "boolean"})
    except NotImplementedError:
        pytest.skip("impl's structured component is not written yet (json_schema_to_regex raises NotImplementedError)")
    return Subject(FAMILY, family_path(FAMILY), implementation())


def _no_divergence(subject: Subject, prop: str, **fields) -> None:
    found = run_check(subject, Case("structured", prop, FAMILY, {"seed": 0, "examples": 5, **fields}))
    assert found is None or found.kind.startswith("oracle disagreement: "), found.describe()


@pytest.mark.parametrize("prop", SCHEMA_PROPERTIES)
@EXAMPLES
@given(schema=schemas())
def test_generated_schemas(prop, schema):
    _no_divergence(_subject(), prop, schema=schema)


@pytest.mark.parametrize("prop", SCHEMA_PROPERTIES)
@EXAMPLES
@given(name=st.sampled_from(sorted(tool_schemas())))
def test_corpus_schemas(prop, name):
    _no_divergence(_subject(), prop, source=name, schema=tool_schemas()[name]["function"]["parameters"])


@pytest.mark.parametrize("group", sorted(tool_corpus())[:1])
def test_forced_calls_parse(group):
    tools = tool_corpus()[group]
    _no_divergence(_subject(), "guarantee", source=group, tools=tools, name=tools[0]["function"]["name"],
                   format="hermes", runs=20)
