"""Property tests: impl's tokenizer against the oracle, every comparison made by run_check.

Families: the embedded ones, each folder under $TEXTBOUND_MODELS, and a few fuzzed pipelines;
one more test draws (and shrinks) whole pipelines. TEXTBOUND_HYPOTHESIS_PROFILE=deep explores
further and samples the sweeps more densely.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.families import FAMILIES as TEST_FAMILIES
from tests.families import impl_subject, implementation
from textbound.checks import Subject, run_check
from textbound.families import fuzz_families, write_family
from textbound.naming.divergence import Case
from textbound.properties import pipelines, sweeps
from textbound.properties.strategies import text_with_specials, unicode_text
from textbound.properties.vocabulary import VocabularySurvey

PROFILES = {
    "default": {"settings": settings(max_examples=20, deadline=None, derandomize=True,
                                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]),
                "fuzzed_pipelines": 8, "sweep_stride": 997},
    "deep": {"settings": settings(max_examples=400, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]),
             "fuzzed_pipelines": 100, "sweep_stride": 37},
}
PROFILE = PROFILES[os.environ.get("TEXTBOUND_HYPOTHESIS_PROFILE", "default")]
EXAMPLES = PROFILE["settings"]
FUZZ_SEED = 0
FUZZ_COUNT = 4


# -- families ------------------------------------------------------------------------------------

FUZZ_NAMES = [f"fuzz-{FUZZ_SEED}-{index}" for index in range(FUZZ_COUNT)]
FAMILIES = [*TEST_FAMILIES, *FUZZ_NAMES]


class Family:
    """A family under test. Not a dataclass: Hypothesis prints this in every failing example, and
    would print a dataclass field by field, every vocabulary id included."""

    def __init__(self, subject: Subject):
        self.subject = subject
        self.survey = VocabularySurvey(subject.oracle)

    def __repr__(self) -> str:
        return f"<family {self.subject.family} at {self.subject.path}>"


@pytest.fixture(scope="session")
def fuzz_dirs(tmp_path_factory) -> dict[str, Path]:
    out_dir = tmp_path_factory.mktemp("fuzz")
    return {family.name: family.path for family in fuzz_families(FUZZ_SEED, FUZZ_COUNT, out_dir)}


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, fuzz_dirs: dict[str, Path]) -> Family:
    name = request.param
    if name in fuzz_dirs:
        return Family(Subject(name, fuzz_dirs[name], implementation()))
    return Family(impl_subject(name))


def agrees(subject: Subject, prop: str, **case_input) -> None:
    divergence = run_check(subject, Case("tokenizer", prop, subject.family, case_input))
    if divergence is not None:
        raise AssertionError(divergence.describe())


# -- properties on every family ------------------------------------------------------------------

@EXAMPLES
@given(text=unicode_text(), add_special_tokens=st.booleans())
def test_encode(family: Family, text: str, add_special_tokens: bool) -> None:
    agrees(family.subject, "encode", text=text, add_special_tokens=add_special_tokens)


@EXAMPLES
@given(data=st.data(), add_special_tokens=st.booleans())
def test_encode_around_added_tokens(family: Family, data: st.DataObject, add_special_tokens: bool) -> None:
    text = data.draw(family.survey.texts(), label="text")
    agrees(family.subject, "encode", text=text, add_special_tokens=add_special_tokens)


@EXAMPLES
@given(data=st.data(), skip_special_tokens=st.booleans())
def test_decode(family: Family, data: st.DataObject, skip_special_tokens: bool) -> None:
    ids = data.draw(family.survey.id_sequences(), label="ids")
    agrees(family.subject, "decode", ids=ids, skip_special_tokens=skip_special_tokens)


@EXAMPLES
@given(data=st.data(), add_special_tokens=st.booleans(), skip_special_tokens=st.booleans())
def test_decode_of_encode(family: Family, data: st.DataObject, add_special_tokens: bool,
                          skip_special_tokens: bool) -> None:
    """What the oracle's ids for a text decode to, the usual round trip."""
    text = data.draw(family.survey.texts(), label="text")
    ids = family.subject.oracle.encode(text, add_special_tokens)
    agrees(family.subject, "decode", ids=ids, skip_special_tokens=skip_special_tokens)


@EXAMPLES
@given(data=st.data())
def test_vocab(family: Family, data: st.DataObject) -> None:
    known = family.survey.ids
    beyond = st.integers(known[-1] + 1, known[-1] + 3)  # ids no token has
    ids = data.draw(st.lists(st.sampled_from(known) | beyond, min_size=1, max_size=20), label="ids")
    agrees(family.subject, "vocab", ids=ids)


def test_sweep_sample(family: Family) -> None:
    """Every ``sweep_stride``-th item of each sweep: each id decoded alone, and the sweep texts
    encoded. The runner walks them all."""
    stride, subject = PROFILE["sweep_stride"], family.subject
    cases = [Case("tokenizer", "decode", subject.family, {"ids": [token_id], "skip_special_tokens": skip})
             for token_id in sweeps.vocabulary_ids(subject.oracle, stride) for skip in (False, True)]
    cases += [Case("tokenizer", "encode", subject.family, {"text": text, "add_special_tokens": False})
              for text in sweeps.sweep_texts(subject.oracle, stride)]
    found = [divergence for divergence in (run_check(subject, case) for case in cases) if divergence]
    assert not found, f"{len(found)} divergences; first ones:\n" + "\n".join(d.describe() for d in found[:5])


# -- pipelines fuzzing found divergences in, minimized (kept: the fuzzer avoids some of them) -----

def _strip() -> dict:
    return {"type": "Strip", "strip_left": True, "strip_right": True}


FOUND_BY_FUZZING = [
    pytest.param(pipelines.plain_spec(added_tokens=[pipelines.added_token(" ", lstrip=True, rstrip=True)]),
                 ["  ", "a  a"], id="whitespace-token-stripping-whitespace"),
    pytest.param(pipelines.plain_spec(added_tokens=[pipelines.added_token("<s>", single_word=True, special=True)]),
                 ["<s>\U00011dcf", "\U00011dcf<s>", "<s>\U00019124"], id="single-word-next-to-unicode-17-letter"),
    pytest.param(pipelines.plain_spec(added_tokens=[pipelines.added_token("<x>", rstrip=True, special=True),
                                                    pipelines.added_token(" ", lstrip=True)]),
                 ["<x> ", "a <x> a"], id="rstrip-token-before-lstrip-whitespace-token"),
    pytest.param(pipelines.plain_spec(normalizer=_strip(), added_tokens=[pipelines.added_token(" ")]),
                 ["a", "ab", " "], id="normalized-token-normalizing-to-nothing"),
    pytest.param(pipelines.plain_spec(normalizer=_strip(), pre_tokenizer=pipelines.metaspace_node("first")),
                 [" a", "  a b", "\u3000a"], id="metaspace-first-after-strip"),
    pytest.param(pipelines.plain_spec(normalizer={"type": "Replace", "pattern": {"String": "a"}, "content": ""},
                                      pre_tokenizer=pipelines.metaspace_node("first")),
                 ["ab"], id="metaspace-first-after-removed-start"),
]


@pytest.mark.parametrize(("spec", "texts"), FOUND_BY_FUZZING)
def test_found_by_fuzzing(spec: dict, texts: list[str], tmp_path: Path) -> None:
    subject = Subject("found-by-fuzzing", write_family(spec, tmp_path), implementation())
    for text in texts:
        agrees(subject, "encode", text=text, add_special_tokens=False)


# -- whole pipelines, shrunk ---------------------------------------------------------------------

@settings(EXAMPLES, max_examples=PROFILE["fuzzed_pipelines"])
@given(spec=pipelines.fuzz_specs(), data=st.data())
def test_fuzzed_pipeline(spec: dict, data: st.DataObject) -> None:
    """A random pipeline, trained, encodes and decodes like the oracle; a failure shrinks the
    pipeline as well as the input."""
    with tempfile.TemporaryDirectory(prefix="textbound-fuzz-") as folder:
        subject = Subject("fuzzed", write_family(spec, Path(folder)), implementation())
        added = [token["content"] for token in spec["added_tokens"]]
        text = data.draw(text_with_specials(added), label="text")
        agrees(subject, "encode", text=text, add_special_tokens=data.draw(st.booleans(), label="add_special_tokens"))
        ids = data.draw(VocabularySurvey(subject.oracle).id_sequences(), label="ids")
        agrees(subject, "decode", ids=ids, skip_special_tokens=data.draw(st.booleans(), label="skip_special_tokens"))
