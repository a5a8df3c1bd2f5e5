"""Checks of the ``detokenizer`` component: impl's IncrementalDetokenizer against tokenizers'
whole decode and its DecodeStream.

- detokenizer/stream: ``prompt_text`` plus every delta plus ``flush()`` equals the oracle's decode
  of ``prompt_ids + ids``, byte for byte; after every ``add`` the text shown so far is a prefix of
  it (so a U+FFFD is never shown where the whole decode has a character); ``text`` is the deltas;
  and ``prompt_text`` is what streaming the prompt alone shows (the priming semantics documented
  in impl/streaming/detokenizer.py, vLLM's).
- detokenizer/decode_stream: impl is never behind tokenizers' DecodeStream, stepped with the same
  chunks, except by text that one more id can still change (the oracle shows it: a witness id
  appended makes the whole decode differ there). A stream showing text the whole decode does not
  begin with (so contradicting DecodeStream, whose text is such a beginning) is the stream
  property's divergence: every decode_stream case has a stream case of the same input, which names
  it, and this property does not name the same bug a second time.
  DecodeStream is a reference only while its own output is a prefix of the whole decode: it shows
  a byte-fallback run as soon as the bytes decode, and when a later byte token turns the run into
  U+FFFDs it has shown text the whole decode does not have (and then raises InvalidPrefix). It
  counts a prompt as shown only if its decode does not end in U+FFFD; the comparison is made on
  the whole text shown (prompt included) so the two ways of counting the prompt line up.
"""
from __future__ import annotations

from ..naming.divergence import REPLACEMENT_CHARACTER, Case, Divergence, first_index
from ..naming.shape import NOTHING_NAMED, REPEATS, Named, stream_shape, whitespace_apart
from .registry import Subject, check, family_vocabulary, impl_call, oracle_call, text_window
from .streaming import Streamed, StreamInput, decode_stream_shown, stream_impl, stream_reading, vocabulary_survey


def premature_kind(expected: str, shown: str, decode: str = "the whole decode", named: Named = NOTHING_NAMED) -> str:
    """What a stream showed that the decode it must be a beginning of does not begin with: a byte
    run shown otherwise (a U+FFFD on either side where they part: an unfinished character released,
    or bytes decoded one by one) unless it repeats text, else the shape of the difference:
    ``premature_kind("é", "\ufffd") == "shown a byte run otherwise than the whole decode"``,
    ``premature_kind("a b c", "ab") == "shown text the whole decode changes: drops ' '"``."""
    index = first_index(expected, shown)
    shape = stream_shape(expected, shown, named)
    if shape != REPEATS and not whitespace_apart(expected, shown) and \
            REPLACEMENT_CHARACTER in (expected[index:index + 1], shown[index:index + 1]):
        return f"shown a byte run otherwise than {decode}"
    return f"shown text {decode} changes: {shape}"


def _premature(case: Case, expected: str, shown: str, after: str, named: Named, reading: str | None) -> Divergence:
    """``shown`` against the decode it must begin, named by how the stream read the ids where a
    reading (streaming.stream_reading) gives its whole text, else by the shape of the difference."""
    index = first_index(expected, shown)
    kind = f"stream {reading}" if reading else premature_kind(expected, shown, named=named)
    return Divergence(case, expected, shown, kind, {
        "after": after, "index": index, "expected_window": text_window(expected, index),
        "shown_window": text_window(shown, index)})


@check("detokenizer", "stream", minimize="ids")
def check_detokenizer_stream(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    expected, oracle_error = oracle_call(
        lambda: subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens))
    streamed, failure = impl_call(case, expected, lambda: stream_impl(subject, given))
    if oracle_error:
        return None if failure else Divergence(case, oracle_error, streamed.final, "oracle raised, impl did not")
    if failure:
        return failure
    added = family_vocabulary(subject).added_tokens
    if wrong := _first_wrong_step(expected, streamed):
        after, shown = wrong
        return _premature(case, expected, shown, after, added, stream_reading(subject, given, streamed))
    if streamed.text != expected[len(streamed.prompt_text):]:
        return Divergence(case, expected[len(streamed.prompt_text):], streamed.text, "text is not the deltas")
    if given.prompt_ids:
        primed, failure = impl_call(case, streamed.prompt_text, lambda: subject.impl.IncrementalDetokenizer(
            subject.tokenizer, skip_special_tokens=given.skip_special_tokens).add(given.prompt_ids))
        if failure:
            return failure
        prompt_decode = subject.oracle.decode(given.prompt_ids, given.skip_special_tokens)
        if not prompt_decode.startswith(primed):  # the prompt streamed alone is a stream too
            return _premature(case, prompt_decode, primed, "prompt streamed alone", added, None)
        if primed != streamed.prompt_text:
            return Divergence(case, primed, streamed.prompt_text, "prompt_text is not the prompt streamed")
    return None


def _first_wrong_step(expected: str, streamed: Streamed) -> tuple[str, str] | None:
    """(after, shown) for the first text the stream showed that ``expected`` does not begin with
    (its whole text, shown at the end, must be ``expected``); None when there is none."""
    steps = [("prompt", streamed.prompt_text), *((f"add {i}", s) for i, s in enumerate(streamed.shown))]
    wrong = next(((after, shown) for after, shown in steps if not expected.startswith(shown)), None)
    return wrong or (None if streamed.final == expected else ("flush", streamed.final))


@check("detokenizer", "decode_stream", minimize="ids")
def check_decode_stream(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    whole, oracle_error = oracle_call(lambda: subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # DecodeStream decodes the same ids: there is nothing to compare with
    reference = decode_stream_shown(subject, given)
    streamed, failure = impl_call(case, reference, lambda: stream_impl(subject, given))
    if failure:
        return failure
    if _first_wrong_step(whole, streamed):
        # Text the whole decode does not begin with: the stream case of the same input (every
        # decode_stream case has one) names it, so one bug is not a second signature here.
        return None
    witness = None
    for step, (theirs, mine) in enumerate(zip(reference, streamed.shown)):
        held = theirs[len(mine):]
        if held:
            witness = _changing_id(subject, given.ids_through(step), theirs, given.skip_special_tokens, witness)
            if witness is None:
                return Divergence(case, theirs, mine, "holds back settled text DecodeStream shows",
                                  {"after": f"add {step}", "held": held})
    return None


def _changing_id(subject: Subject, ids: list[int], text: str, skip: bool, likely: int | None) -> int | None:
    """An id (from a sample of ids that break or end things) after which the whole decode of
    ``ids`` no longer starts with ``text``; ``likely``, the one found for the step before, first."""
    if likely is not None and not subject.oracle.decode(ids + [likely], skip).startswith(text):
        return likely
    witnesses = vocabulary_survey(subject).witnesses
    continued = subject.oracle.decode_batch([ids + [w] for w in witnesses], skip)
    return next((w for w, decoded in zip(witnesses, continued) if not decoded.startswith(text)), None)

