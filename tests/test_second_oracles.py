"""The second oracles (sentencepiece, tiktoken), the oracle disagreements recorded between them and
`tokenizers`, and tiktoken as an --impl adapter."""
from __future__ import annotations

import json

import pytest

from textbound.checks import Subject, case_source, run_check
from textbound.checks.tokenizer_cases import corpus_snippets
from textbound.families import Family, build_family
from textbound.oracles.disagreements import SecondOracleComparison
from textbound.oracles.tiktoken_oracle import NotExpressible, TiktokenOracle, TiktokenVocabulary, token_bytes_of
from textbound.oracles.tokenizers_oracle import TokenizersOracle
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation

from .families import SHARED, shared

tiktoken = pytest.importorskip("tiktoken")
QUICK = BUDGETS["quick"]
# llama3_1 has llama3's shape; qwen3 stands for the shared vocabularies (each takes seconds to convert).
BYTE_LEVEL = ["gpt2", "llama3", "qwen", shared("qwen3")]


def family_path(name: str):
    return SHARED[name] if name in SHARED else build_family(name)


@pytest.fixture(scope="module")
def mistral_v3():
    pytest.importorskip("mistral_common", reason="the Mistral families need mistral-common")
    from textbound.families import mistral_family
    return mistral_family("mistral-v3")


# -- sentencepiece ---------------------------------------------------------------------------------

def test_sentencepiece_oracle_reads_a_mistral_family_and_only_sentencepiece_families(mistral_v3):
    from textbound.oracles.sentencepiece_oracle import SentencePieceOracle

    oracle = SentencePieceOracle.for_family(mistral_v3.path)
    reference = TokenizersOracle.from_dir(mistral_v3.path)
    assert oracle.version.startswith("sentencepiece ") and oracle.vocab_size == reference.vocab_size
    assert oracle.encode("Hello world") == reference.encode("Hello world")
    assert oracle.encode("[INST]") != reference.encode("[INST]")  # a control piece is never matched in text
    assert SentencePieceOracle.for_family(build_family("gpt2")) is None


# -- tiktoken --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_byte_level_vocabularies_convert_to_tiktoken_exactly(name):
    path = family_path(name)
    vocabulary = TiktokenVocabulary.from_dir(path)
    reference = TokenizersOracle.from_dir(path)
    texts = corpus_snippets(QUICK)
    assert [vocabulary.encode(t, add_special_tokens=True) for t in texts] == \
        [reference.encode(t, add_special_tokens=True) for t in texts]
    ids = [i for t in texts for i in reference.encode(t)]
    assert vocabulary.decode(ids) == reference.decode(ids)


@pytest.mark.parametrize("name, why", [
    ("bert", "byte-level BPE"), ("roberta", "add_prefix_space"), ("sentencepiece", "byte-level BPE"),
    ("metaspace", "normalizer NFKC"), ("unigram", "byte-level BPE"), ("wordpiece", "byte-level BPE"),
])
def test_what_tiktoken_cannot_express_is_refused_naming_the_part(name, why):
    with pytest.raises(NotExpressible, match=why):
        TiktokenVocabulary.from_dir(build_family(name))
    assert TiktokenOracle.for_family(build_family(name)) is None


def test_nfc_applies_between_added_tokens_as_tokenizers_does():
    from textbound.properties.sweeps import first_special_token

    path = build_family("qwen")  # NFC, and added tokens matched on the raw text
    reference = TokenizersOracle.from_dir(path)
    special = first_special_token(reference)
    text = f"e\u0301{special}\u0338"  # whole-text NFC would fuse the token's ">" with U+0338
    assert special.endswith(">") and TiktokenVocabulary.from_dir(path).encode(text) == reference.encode(text)


def test_merges_out_of_id_order_are_refused():
    spec = json.loads((build_family("gpt2") / "tokenizer.json").read_text(encoding="utf-8"))
    merges = spec["model"]["merges"]
    merges[0], merges[-1] = merges[-1], merges[0]
    with pytest.raises(NotExpressible, match="merge #1 .* tiktoken would apply it earlier"):
        TiktokenVocabulary.from_tokenizer_json(spec, "shuffled")


def test_byte_level_token_strings_spell_bytes():
    assert [token_bytes_of(t) for t in ["Ġthe", "ĊĠ", "Ã©", "ā"]] == [b" the", b"\n ", "é".encode(), b"\x01"]
    assert token_bytes_of("a b") is None  # a plain space is not a ByteLevel character


# -- oracle disagreements --------------------------------------------------------------------------

class Rewriting:
    """A second oracle that is `tokenizers` on text rewritten first: a broken reference."""

    def __init__(self, path, rewrite=lambda text: text, version="rewriting 1"):
        self.reference, self.rewrite, self.version = TokenizersOracle.from_dir(path), rewrite, version

    def encode(self, text):
        return self.reference.encode(self.rewrite(text))

    def decode(self, ids):
        return self.rewrite(self.reference.decode(ids))


def raising(text):
    raise RuntimeError("no")


def disagreement_kinds(family: Family, impl: str, second_oracles: list | None = None, limit: int = 2000) -> set[str]:
    """The kinds the tokenizer checks find on the family's first ``limit`` quick cases (with
    ``second_oracles`` in place of the family's own, when given)."""
    subject = Subject(family.name, family.path, Implementation(impl))
    if second_oracles is not None:
        subject.cache["second oracles"] = [SecondOracleComparison(subject.oracle, o) for o in second_oracles]
    cases = list(case_source(family, "tokenizer", QUICK, 0))[:limit]
    return {found.kind for found in map(lambda case: run_check(subject, case), cases) if found is not None}


@pytest.mark.parametrize("rewrite, classification", [
    (lambda t: t.replace("  ", " "), "runs of spaces"),
    (lambda t: t[1:] if t.startswith(" ") and t[1:2] != " " else t, "leading space"),
    (lambda t: t.replace("\n", " "), "other whitespace"),
    (raising, "oracle B raised"),
])
def test_a_second_oracle_that_differs_is_an_oracle_disagreement_classified(rewrite, classification):
    family = Family("gpt2", build_family("gpt2"), "embedded")
    kinds = disagreement_kinds(family, "textbound.impl", [Rewriting(family.path, rewrite)])
    assert f"oracle disagreement: rewriting: {classification}" in kinds
    assert all(kind.startswith("oracle disagreement: rewriting: ") for kind in kinds)  # impl agrees with A


def test_agreeing_oracles_record_nothing():
    family = Family("gpt2", build_family("gpt2"), "embedded")
    assert disagreement_kinds(family, "textbound.impl", [Rewriting(family.path)]) == set()


def test_control_tokens_are_where_sentencepiece_and_tokenizers_part(mistral_v3):
    kinds = disagreement_kinds(mistral_v3, "textbound.adapters.tokenizers_adapter")
    assert "oracle disagreement: sentencepiece: control tokens" in kinds
    assert all(kind.startswith("oracle disagreement: sentencepiece: ") for kind in kinds)


# -- tiktoken as an --impl -------------------------------------------------------------------------

@pytest.mark.parametrize("component", ["tokenizer", "detokenizer"])
def test_tiktoken_adapter_is_checked_through_the_harness(component):
    family = Family("llama3", build_family("llama3"), "embedded")
    subject = Subject(family.name, family.path, Implementation("textbound.adapters.tiktoken_adapter"))
    cases = list(case_source(family, component, QUICK, 0))[:400]
    assert cases and [d for d in (run_check(subject, case) for case in cases) if d] == []


def test_tiktoken_adapter_streams_a_character_split_across_tokens():
    from textbound.adapters.tiktoken_adapter import IncrementalDetokenizer, Tokenizer

    tokenizer = Tokenizer.from_dir(build_family("gpt2"))
    euro = [tokenizer.token_to_id(t) for t in ["â", "Ĥ", "¬"]]  # the three bytes of "€" alone
    stream = IncrementalDetokenizer(tokenizer)
    assert [stream.add([i]) for i in euro] == ["", "", "€"]
    with pytest.raises(ValueError, match="ids: invalid token id 999999"):
        stream.add([999999])
    assert stream.add([tokenizer.token_to_id("â")]) == "" and stream.flush() == "\ufffd"
    assert stream.text == "€\ufffd"


def test_tiktoken_adapter_refuses_a_family_it_cannot_express():
    from textbound.adapters.tiktoken_adapter import Tokenizer

    with pytest.raises(NotExpressible, match="sentencepiece"):
        Tokenizer.from_dir(build_family("sentencepiece"))
