"""The families and shared data every test runs on, parametrized once for all test files (as
tiktoken's tests/test_helpers.py does).

    @pytest.mark.parametrize("family", FAMILIES)      # "gpt2", ..., "shared-qwen3" when set
    def test_x(family): subject = impl_subject(family)

    @pytest.mark.parametrize("path", SHARED_MODEL_DIRS)  # skips, saying why, without $TEXTBOUND_MODELS
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from textbound.checks import Subject
from textbound.families import MODELS_ENV, build_family, embedded_family_names, folder_families, load_spec, models_dir
from textbound.oracles.chat_oracle import TEMPLATES_ENV
from textbound.plan.implementation import Implementation

IMPL = os.environ.get("TEXTBOUND_IMPL", "textbound.impl")  # any module exposing impl's public names
MODELS = models_dir()
SHARED = {family.name: family.path for family in folder_families(MODELS)} if MODELS else {}
NEEDS_MODELS = pytest.mark.skipif(not MODELS, reason=f"${MODELS_ENV} is not set: no shared models")
TEMPLATES = Path(os.environ[TEMPLATES_ENV]) if os.environ.get(TEMPLATES_ENV) else None
NEEDS_TEMPLATES = pytest.mark.skipif(TEMPLATES is None, reason=f"${TEMPLATES_ENV} is not set: no shared templates")

EMBEDDED = embedded_family_names()
# Every embedded family, then each shared one (a test id of its own, so a filter can pick them).
FAMILIES = [*EMBEDDED, *(pytest.param(name, id=f"shared-{name}") for name in SHARED)]


def _model_type(name: str) -> str:
    """The family's model type, read without training it (an embedded family's spec names it)."""
    if name in SHARED:
        return json.loads((SHARED[name] / "tokenizer.json").read_text(encoding="utf-8"))["model"].get("type", "")
    return load_spec(name)["model"]["type"]


def _families_of(model_type: str) -> list:
    return [*(name for name in EMBEDDED if _model_type(name) == model_type),
            *(pytest.param(name, id=f"shared-{name}") for name in SHARED if _model_type(name) == model_type)]


# The families whose model is BPE, or Unigram (for tests of that model's own machinery).
BPE_FAMILIES = _families_of("BPE")
UNIGRAM_FAMILIES = _families_of("Unigram")

# The folders of the shared models; one skipped parameter, saying why, when there are none.
SHARED_MODEL_DIRS = ([pytest.param(path, id=name) for name, path in SHARED.items()]
                     or [pytest.param(None, id="unset", marks=pytest.mark.skip(reason=f"${MODELS_ENV} is not set"))])


def shared(name: str):
    """A shared family's name as a parameter that skips when $TEXTBOUND_MODELS is not set."""
    return pytest.param(name, marks=NEEDS_MODELS)


def family_path(name: str) -> Path:
    return SHARED[name] if name in SHARED else build_family(name)


@functools.cache
def implementation() -> Implementation:
    return Implementation(IMPL)


@functools.cache
def impl_subject(name: str) -> Subject:
    """The family as the checks see it, with the implementation under test loaded once."""
    return Subject(name, family_path(name), implementation())
