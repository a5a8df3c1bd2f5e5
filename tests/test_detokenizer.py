"""impl.IncrementalDetokenizer (and ids -> detokenizer -> StopChecker) against tokenizers' decode.

The properties run through the harness's checks (textbound.checks), so pytest and
``textbound check`` agree on what a divergence is: for every split of the ids into ``add`` calls
the shown text is always a prefix of the whole decode and ends equal to it, DecodeStream is never
contradicted, and stop strings cut the streamed text where they cut the whole text. They run on
every embedded family and on each family under $TEXTBOUND_MODELS. The unit tests pin the cases the
issue names; their expected texts come from the oracle, never typed by hand.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.checks import run_check
from textbound.checks.streaming import vocabulary_survey
from textbound.naming.divergence import Case

from .families import FAMILIES, NEEDS_MODELS, impl_subject

os.environ.setdefault("RUST_BACKTRACE", "0")

REPLACEMENT_CHARACTER = "\ufffd"


def detokenizer(family: str, skip_special_tokens: bool = False, prompt_ids: list[int] | None = None):
    return impl_subject(family).impl.IncrementalDetokenizer(
        impl_subject(family).tokenizer, skip_special_tokens=skip_special_tokens, prompt_ids=prompt_ids)


def assert_no_divergence(family: str, case: Case) -> None:
    found = run_check(impl_subject(family), case)
    assert found is None, found.describe()


# -- properties, through the checks ------------------------------------------------------------------

@st.composite
def id_sequences(draw: st.DrawFn, family: str) -> list[int]:
    """Ids from the whole vocabulary, stray bytes, byte tokens, specials and spelled characters."""
    survey = vocabulary_survey(impl_subject(family))
    pools = [pool for pool in (survey.ids, survey.broken_ids, survey.byte_ids, survey.special_ids) if pool]
    single = st.sampled_from(pools).flatmap(st.sampled_from).map(lambda token_id: [token_id])
    spelled = st.sampled_from(["é", "€", "中", "😀", "\u2028"]).map(survey.spelled)
    pieces = st.lists(st.one_of(single, spelled), min_size=1, max_size=10)
    return [token_id for piece in draw(pieces) for token_id in piece] or [survey.ids[0]]


@st.composite
def stream_inputs(draw: st.DrawFn, family: str) -> dict:
    ids = draw(id_sequences(family))
    cut = draw(st.integers(0, len(ids) - 1))
    return {"ids": ids[cut:], "prompt_ids": ids[:cut], "skip_special_tokens": draw(st.booleans()),
            "splits": draw(st.lists(st.integers(0, len(ids)), max_size=len(ids) + 2))}


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_stream_equals_whole_decode(family: str, data: st.DataObject) -> None:
    given_input = data.draw(stream_inputs(family))
    assert_no_divergence(family, Case("detokenizer", "stream", family, given_input))
    assert_no_divergence(family, Case("detokenizer", "decode_stream", family, given_input))


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_stops_on_streamed_ids_equal_stops_on_whole_text(family: str, data: st.DataObject) -> None:
    given_input = data.draw(stream_inputs(family))
    del given_input["prompt_ids"]
    text = impl_subject(family).oracle.decode(given_input["ids"], given_input["skip_special_tokens"])
    stops = data.draw(st.lists(st.one_of(
        st.integers(0, len(text)).flatmap(lambda start: st.integers(start, len(text)).map(lambda end: text[start:end])),
        st.sampled_from(["\n", " ", REPLACEMENT_CHARACTER])), max_size=3))
    include = data.draw(st.booleans())
    assert_no_divergence(family, Case("stops", "pipeline", family,
                                      {**given_input, "stops": stops, "include_stop": include}))
    splits = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    assert_no_divergence(family, Case("stops", "stream", family,
                                      {"text": text, "stops": stops, "splits": splits, "include_stop": include}))


@pytest.mark.parametrize("family", FAMILIES)
def test_corpus_text_streamed_one_id_at_a_time(family: str) -> None:
    oracle = impl_subject(family).oracle
    ids = oracle.encode("Hello world, héllo wörld!\n\n  日本語のテキスト 😀👍🏽 done.\tx = 1 + 2")
    for skip in (False, True):
        case = {"ids": ids, "splits": list(range(len(ids))), "skip_special_tokens": skip, "prompt_ids": []}
        assert_no_divergence(family, Case("detokenizer", "stream", family, case))
        assert_no_divergence(family, Case("detokenizer", "decode_stream", family, case))


# -- the cases the issue names ---------------------------------------------------------------------

def stream(family: str, chunks: list[list[int]], skip: bool = False, prompt_ids: list[int] | None = None):
    """The deltas of streaming ``chunks``, the flushed tail last, and the detokenizer."""
    detok = detokenizer(family, skip, prompt_ids)
    deltas = [detok.add(chunk) for chunk in chunks]
    return deltas + [detok.flush()], detok


@pytest.mark.parametrize("family", ["sentencepiece", "metaspace", pytest.param("llama2", marks=NEEDS_MODELS)])
def test_sentencepiece_start_space_dropped_only_at_the_very_start(family: str) -> None:
    oracle = impl_subject(family).oracle
    ids = oracle.encode("Hello world again")
    deltas, _ = stream(family, [[token_id] for token_id in ids])
    assert deltas[0] == oracle.decode(ids[:1]) and not deltas[0].startswith(" ")  # dropped at the start...
    assert "".join(deltas) == oracle.decode(ids) and " world again" in "".join(deltas)  # ...and only there


@pytest.mark.parametrize("family", ["sentencepiece", pytest.param("llama2", marks=NEEDS_MODELS)])
def test_byte_fallback_invalid_bytes_give_one_replacement_per_byte(family: str) -> None:
    oracle, survey = impl_subject(family).oracle, vocabulary_survey(impl_subject(family))
    euro = survey.spelled("€")
    letter = oracle.encode("a")
    ids = euro[:2] + letter + euro
    deltas, _ = stream(family, [[token_id] for token_id in ids])
    assert "".join(deltas) == oracle.decode(ids)
    assert oracle.decode(ids).count(REPLACEMENT_CHARACTER) == 2  # one per byte, not per invalid sequence
    # The complete euro sign is a byte-fallback run a further byte could still break: held until flush.
    assert deltas[-1] == oracle.decode(ids)[-1] == "€"


@pytest.mark.parametrize("family", ["gpt2", "qwen", pytest.param("qwen3", marks=NEEDS_MODELS)])
def test_byte_level_character_split_across_tokens_is_never_shown_half(family: str) -> None:
    oracle, survey = impl_subject(family).oracle, vocabulary_survey(impl_subject(family))
    ids = oracle.encode("x") + survey.spelled("😀") + oracle.encode("y")
    deltas, _ = stream(family, [[token_id] for token_id in ids])
    assert REPLACEMENT_CHARACTER not in "".join(deltas)
    assert "".join(deltas) == oracle.decode(ids)
    assert deltas[4] == "😀"  # shown whole, with its last byte


@pytest.mark.parametrize("family", ["sentencepiece", "gpt2", pytest.param("llama3_1", marks=NEEDS_MODELS)])
@pytest.mark.parametrize("skip", [False, True])
def test_special_tokens_skipped_or_shown(family: str, skip: bool) -> None:
    oracle, survey = impl_subject(family).oracle, vocabulary_survey(impl_subject(family))
    special = survey.special_ids[-1]
    ids = oracle.encode("Hello") + [special] * 5 + oracle.encode(" world")
    deltas, detok = stream(family, [[token_id] for token_id in ids], skip)
    assert "".join(deltas) == detok.text == oracle.decode(ids, skip_special_tokens=skip)


@pytest.mark.parametrize("family", ["gpt2", "sentencepiece", pytest.param("qwen3", marks=NEEDS_MODELS)])
def test_prompt_ending_mid_character(family: str) -> None:
    oracle, survey = impl_subject(family).oracle, vocabulary_survey(impl_subject(family))
    euro = survey.spelled("€")
    prompt, output = oracle.encode("Price:") + euro[:2], euro[2:] + oracle.encode(" 5")
    deltas, detok = stream(family, [[token_id] for token_id in output], prompt_ids=prompt)
    shown_by_prompt = oracle.decode(prompt)
    assert shown_by_prompt.endswith(REPLACEMENT_CHARACTER) and shown_by_prompt.startswith(detok.prompt_text)
    assert REPLACEMENT_CHARACTER not in detok.prompt_text  # the half character is not shown...
    assert detok.text == "".join(deltas) == oracle.decode(prompt + output)[len(detok.prompt_text):]
    assert detok.text.startswith("€")  # ...it is shown whole, as the first output text


def test_prompt_is_primed_as_if_streamed() -> None:
    oracle = impl_subject("sentencepiece").oracle
    ids = oracle.encode("Hello world")
    cut = next(i for i, piece in enumerate(oracle.pieces(ids)) if i and piece.startswith("▁"))
    prompt, output = ids[:cut], ids[cut:]
    _, primed = stream("sentencepiece", [output], prompt_ids=prompt)
    assert primed.prompt_text == oracle.decode(prompt)
    assert primed.text == oracle.decode(prompt + output)[len(oracle.decode(prompt)):]
    assert primed.text.startswith(" ")  # mid-sequence: the SentencePiece space is kept


def decoded_per_add(family: str, ids: list[int]) -> list[int]:
    """How many ids the detokenizer decodes for each ``add`` of one id."""
    tokenizer = impl_subject(family).tokenizer
    decoded: list[int] = []

    class CountingTokenizer:
        def __getattr__(self, name: str):
            return getattr(tokenizer, name)

        def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
            decoded.append(len(ids))
            return tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    detok = impl_subject(family).impl.IncrementalDetokenizer(CountingTokenizer(), skip_special_tokens=True)
    per_add = []
    for token_id in ids:
        decoded.clear()
        detok.add([token_id])
        per_add.append(sum(decoded))
    return per_add


def test_cost_per_add_does_not_grow_with_the_stream() -> None:
    oracle, survey = impl_subject("sentencepiece").oracle, vocabulary_survey(impl_subject("sentencepiece"))
    per_add = decoded_per_add("sentencepiece", oracle.encode("The quick brown fox jumps over the lazy dog. " * 40))
    assert max(per_add[-50:]) <= max(per_add[:50]) <= 40
    # A long byte-fallback run shows nothing until it ends, and only the add that ends it decodes it all.
    run = [token_id for char in "中文字符" * 100 for token_id in survey.spelled(char)]
    per_add = decoded_per_add("sentencepiece", run + oracle.encode("x"))
    assert sorted(per_add)[-2] <= 40 and max(per_add) >= len(run)


def test_misuse_raises_and_leaves_the_stream_unchanged() -> None:
    oracle = impl_subject("gpt2").oracle
    detok = detokenizer("gpt2")
    shown = detok.add(oracle.encode("Hello"))
    with pytest.raises(ValueError, match="not a token id"):
        detok.add([10**9])
    with pytest.raises(TypeError, match="list of ids"):
        detok.add(5)
    assert shown + detok.add(oracle.encode(" world")) + detok.flush() == oracle.decode(oracle.encode("Hello world"))
    assert detok.flush() == ""
    with pytest.raises(RuntimeError, match="after flush"):
        detok.add([0])
