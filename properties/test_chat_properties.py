"""Chat properties: Hypothesis draws requests (properties.conversations) and the runner's own chat
checks judge them, so a failure here is the divergence ``textbound check`` would record.

- The project's ChatML on an embedded family: render, ids and sanitized ids equal transformers'.
- Every shared template: render equals transformers' (or raises the same class).
- A shared family's own template: render, ids and sanitized ids.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.families import NEEDS_TEMPLATES, SHARED, family_path, impl_subject, shared
from textbound.checks import run_check
from textbound.checks.chat import TOKENIZER_PROPERTIES
from textbound.naming.divergence import Case
from textbound.oracles.chat_oracle import (
    ChatTemplate,
    FamilyChatOracle,
    project_template,
    shared_templates,
    templates_for,
)
from textbound.properties.conversations import CHAT_MARKERS, chat_requests

EMBEDDED_FAMILY = "gpt2"
PROPERTIES = ("render", *TOKENIZER_PROPERTIES)
CHAT_SETTINGS = settings(max_examples=20, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(family: str, prop: str, template: ChatTemplate, request: dict) -> None:
    if prop == "render":  # as the case builder does: the family's special tokens are variables
        specials = FamilyChatOracle.of(family_path(family)).special_token_variables()
        request = {**request, "variables": {**specials, **request["variables"]}}
    case = Case("chat", prop, family, {"template": template.name, "template_digest": template.digest, **request})
    found = run_check(impl_subject(family), case)
    assert found is None, found.describe()


@pytest.mark.parametrize("prop", PROPERTIES)
@CHAT_SETTINGS
@given(request=chat_requests(CHAT_MARKERS))
def test_project_chatml_matches_transformers(prop, request):
    _check(EMBEDDED_FAMILY, prop, project_template(), request)


@NEEDS_TEMPLATES
@CHAT_SETTINGS
@given(template_index=st.integers(min_value=0), request=chat_requests(CHAT_MARKERS))
def test_shared_templates_render_as_transformers_does(template_index, request):
    templates = shared_templates()
    _check(EMBEDDED_FAMILY, "render", templates[template_index % len(templates)], request)


@pytest.mark.parametrize("family", [shared(name) for name in SHARED] or [shared("qwen3")])
@pytest.mark.parametrize("prop", PROPERTIES)
@settings(CHAT_SETTINGS, max_examples=10)
@given(request=chat_requests(CHAT_MARKERS))
def test_shared_family_templates_match_transformers(family, prop, request):
    _check(family, prop, templates_for(family_path(family))[0], request)
