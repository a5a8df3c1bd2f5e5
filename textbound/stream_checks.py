"""Checks for the streaming components, ``detokenizer`` and ``stops``, and the cases they run on.

A streamed case cuts its ids (or text) into the deltas of successive calls at ``splits``, a list
of cut points; cut points past the end count as the end, so delta debugging can shrink the ids
and keep the splits. Properties:

- detokenizer/stream: ``prompt_text`` plus every delta plus ``flush()`` equals the oracle's decode
  of ``prompt_ids + ids``, byte for byte; after every ``add`` the text shown so far is a prefix of
  it (so a U+FFFD is never shown where the whole decode has a character); ``text`` is the deltas;
  and ``prompt_text`` is what streaming the prompt alone shows (the priming semantics documented
  in impl/detokenizer.py, vLLM's).
- detokenizer/decode_stream: tokenizers' DecodeStream, stepped with the same chunks, never shows
  text that contradicts impl's, and impl is never behind it except by text that one more id can
  still change (the oracle shows it: a witness id appended makes the whole decode differ there).
  DecodeStream is a reference only while its own output is a prefix of the whole decode: it shows
  a byte-fallback run as soon as the bytes decode, and when a later byte token turns the run into
  U+FFFDs it has shown text the whole decode does not have (and then raises InvalidPrefix). It
  counts a prompt as shown only if its decode does not end in U+FFFD; the comparison is made on
  the whole text shown (prompt included) so the two ways of counting the prompt line up.
- stops/stream: StopChecker's output and ``stopped`` equal oracles.stop_reference.apply_stops for
  every split of the text, it never releases text that the reference cuts off, and while no stop
  has completed it holds back exactly the longest tail that may still begin a stop.
- stops/pipeline: ids -> IncrementalDetokenizer -> StopChecker, streamed, equals apply_stops of the
  oracle's whole decode.
"""
from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tokenizers.pre_tokenizers import ByteLevel

from oracles.stop_reference import apply_stops, held_back_reference

from .budget import Budget
from .checks import Subject, impl_call, text_divergence, check
from .divergence import Case, Divergence, char_kind, first_index
from .sources import Family

REPLACEMENT_CHARACTER = "\ufffd"
BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
# Comparing with DecodeStream decodes the prefix at every step where impl holds text back, which is
# quadratic in the length: whole corpus files are streamed by the "stream" property alone.
DECODE_STREAM_MAX_IDS = 512
WITNESS_SAMPLE = 16  # ids of each kind appended to show that a text can still change
MAX_RANDOM_IDS = 24
MULTI_BYTE_CHARACTERS = ("é", "ß", "€", "中", "ﬁ", "\u0301", "😀", "🏽", "𝔘", "\u2028")
BYTE_LEVEL = ByteLevel(add_prefix_space=False, use_regex=False)


# -- running both sides ----------------------------------------------------------------------------

def chunks(items: list, splits: list[int]) -> list[list]:
    """``items`` cut at ``splits`` (sorted, clipped to the length; repeats give empty chunks)."""
    cuts = sorted(min(max(cut, 0), len(items)) for cut in splits)
    return [items[start:end] for start, end in itertools.pairwise([0, *cuts, len(items)])]


def _oracle_call(call: Callable):
    """The oracle's answer, or the error it raised (tokenizers panics surface as BaseException)."""
    try:
        return call(), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        return None, f"{type(exc).__name__}: {exc}"


@dataclass
class StreamInput:
    ids: list[int]
    chunks: list[list[int]]
    skip_special_tokens: bool
    prompt_ids: list[int]

    @classmethod
    def of(cls, case: Case) -> "StreamInput":
        ids = case.input["ids"]
        return cls(ids, chunks(ids, case.input.get("splits", [])), case.input.get("skip_special_tokens", True),
                   case.input.get("prompt_ids", []))

    def ids_through(self, step: int) -> list[int]:
        """The prompt and the ids of the first ``step + 1`` chunks."""
        return self.prompt_ids + [i for chunk in self.chunks[:step + 1] for i in chunk]


@dataclass
class Streamed:
    """What impl's detokenizer showed: the prompt's text, then the whole text after each add."""

    prompt_text: str
    shown: list[str]
    final: str
    text: str


def stream_impl(subject: Subject, given: StreamInput) -> Streamed:
    detokenizer = subject.impl.IncrementalDetokenizer(
        subject.tokenizer, skip_special_tokens=given.skip_special_tokens, prompt_ids=given.prompt_ids)
    shown, emitted = [], detokenizer.prompt_text
    for chunk in given.chunks:
        emitted += detokenizer.add(chunk)
        shown.append(emitted)
    emitted += detokenizer.flush()
    return Streamed(detokenizer.prompt_text, shown, emitted, detokenizer.text)


def decode_stream_shown(subject: Subject, given: StreamInput) -> list[str]:
    """The whole text DecodeStream has shown after each chunk, as far as it stays a valid reference."""
    skip = given.skip_special_tokens
    prompt_text, error = _oracle_call(lambda: subject.oracle.decode(given.prompt_ids, skip))
    if error:
        return []
    emitted = "" if prompt_text.endswith(REPLACEMENT_CHARACTER) else prompt_text
    whole = subject.oracle.decode(given.prompt_ids + given.ids, skip)
    pieces = subject.oracle.decode_stream(given.prompt_ids, given.chunks, skip)
    shown = []
    for _ in given.chunks:
        piece, error = _oracle_call(lambda: next(pieces))
        if error or not whole.startswith(emitted + (piece or "")):
            break
        emitted += piece or ""
        shown.append(emitted)
    return shown


# -- detokenizer -----------------------------------------------------------------------------------

def _premature(case: Case, expected: str, shown: str, after: str) -> Divergence:
    index = first_index(expected, shown)
    if index < len(shown) and shown[index] == REPLACEMENT_CHARACTER:
        kind = "shown U+FFFD the whole decode does not have"
    else:
        kind = f"shown text the whole decode changes, at {char_kind(expected, index)}"
    return Divergence(case, expected, shown, kind, {
        "after": after, "index": index, "expected_window": expected[max(0, index - 8): index + 8],
        "shown_window": shown[max(0, index - 8): index + 8]})


@check("detokenizer", "stream", minimize="ids")
def check_detokenizer_stream(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    expected, oracle_error = _oracle_call(
        lambda: subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens))
    streamed, failure = impl_call(case, expected, lambda: stream_impl(subject, given))
    if oracle_error:
        return None if failure else Divergence(case, oracle_error, streamed.final, "oracle raised, impl did not")
    if failure:
        return failure
    for after, shown in [("prompt", streamed.prompt_text), *((f"add {i}", s) for i, s in enumerate(streamed.shown))]:
        if not expected.startswith(shown):
            return _premature(case, expected, shown, after)
    if streamed.final != expected:
        return text_divergence(case, expected, streamed.final)
    if streamed.text != expected[len(streamed.prompt_text):]:
        return Divergence(case, expected[len(streamed.prompt_text):], streamed.text, "text is not the deltas")
    if given.prompt_ids:
        primed, failure = impl_call(case, streamed.prompt_text, lambda: subject.impl.IncrementalDetokenizer(
            subject.tokenizer, skip_special_tokens=given.skip_special_tokens).add(given.prompt_ids))
        if failure or primed != streamed.prompt_text:
            return failure or Divergence(case, primed, streamed.prompt_text, "prompt_text is not the prompt streamed")
    return None


@check("detokenizer", "decode_stream", minimize="ids")
def check_decode_stream(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    _, oracle_error = _oracle_call(lambda: subject.oracle.decode(given.prompt_ids + given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # DecodeStream decodes the same ids: there is nothing to compare with
    reference = decode_stream_shown(subject, given)
    streamed, failure = impl_call(case, reference, lambda: stream_impl(subject, given))
    if failure:
        return failure
    witness = None
    for step, (theirs, mine) in enumerate(zip(reference, streamed.shown)):
        if not (theirs.startswith(mine) or mine.startswith(theirs)):
            index = first_index(theirs, mine)
            return Divergence(case, theirs, mine, "contradicts DecodeStream",
                              {"after": f"add {step}", "index": index, "at": char_kind(theirs, index)})
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


# -- stops -----------------------------------------------------------------------------------------

def _stops_divergence(case: Case, expected: tuple[str, bool], actual: tuple[str, bool]) -> Divergence:
    if actual[1] != expected[1]:
        kind = "stopped where the reference does not" if actual[1] else "missed a stop"
        return Divergence(case, expected, actual, kind)
    index = first_index(expected[0], actual[0])
    return Divergence(case, expected, actual, f"output differs at {char_kind(expected[0], index)}", {
        "index": index, "expected_window": expected[0][max(0, index - 8): index + 8],
        "actual_window": actual[0][max(0, index - 8): index + 8]})


@check("stops", "stream", minimize="text")
def check_stops_stream(subject: Subject, case: Case) -> Divergence | None:
    text, stops, include = case.input["text"], case.input["stops"], case.input.get("include_stop", False)
    deltas = ["".join(part) for part in chunks(list(text), case.input.get("splits", []))]
    expected = apply_stops(text, stops, include)
    longest = max(map(len, stops), default=0)

    def run() -> tuple[str, bool, Divergence | None]:
        checker = subject.impl.StopChecker(stops, include_stop=include)
        output, seen = "", ""
        for step, delta in enumerate(deltas):
            output += checker.add(delta)
            seen += delta
            if not expected[0].startswith(output):
                index = first_index(expected[0], output)
                return output, checker.stopped, Divergence(
                    case, expected[0], output, f"released text the reference cuts off at {char_kind(output, index)}",
                    {"after": f"add {step}", "index": index})
            if not checker.stopped:
                # The held tail is shorter than the longest stop, so the reference needs only that much.
                should_hold = held_back_reference(seen[-longest:], stops) if longest else 0
                held = len(seen) - len(output)
                if held != should_hold:
                    kind = "holds back more than may begin a stop" if held > should_hold else "releases text that may begin a stop"
                    return output, False, Divergence(case, should_hold, held, kind, {"after": f"add {step}", "seen": seen})
        if not checker.stopped:
            output += checker.finish()
        return output, checker.stopped, None

    result, failure = impl_call(case, expected, run)
    if failure:
        return failure
    output, stopped, found = result
    if found:
        return found
    return None if (output, stopped) == expected else _stops_divergence(case, expected, (output, stopped))


@check("stops", "pipeline", minimize="ids")
def check_stops_pipeline(subject: Subject, case: Case) -> Divergence | None:
    given = StreamInput.of(case)
    stops, include = case.input["stops"], case.input.get("include_stop", False)
    whole, oracle_error = _oracle_call(lambda: subject.oracle.decode(given.ids, given.skip_special_tokens))
    if oracle_error:
        return None  # the detokenizer/stream check judges what to do when the oracle cannot decode
    expected = apply_stops(whole, stops, include)

    def run() -> tuple[str, bool]:
        detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens)
        checker = subject.impl.StopChecker(stops, include_stop=include)
        def deltas() -> Iterator[str]:
            for chunk in given.chunks:
                yield detokenizer.add(chunk)
            yield detokenizer.flush()

        output = ""
        for delta in deltas():
            output += checker.add(delta)
            if checker.stopped:
                return output, True
        return output + checker.finish(), False

    actual, failure = impl_call(case, expected, run)
    if failure or actual == expected:
        return failure
    return _stops_divergence(case, expected, actual)


# -- cases -----------------------------------------------------------------------------------------

@dataclass
class VocabularySurvey:
    """Ids grouped by what they decode to alone, found once per family from the oracle."""

    vocab: dict[str, int]
    ids: list[int]
    special_ids: list[int]
    broken_ids: list[int]   # decode alone to U+FFFD: stray bytes of a character
    byte_ids: list[int]     # byte-fallback tokens <0xNN>, valid or not alone
    witnesses: list[int]    # a sample of broken ids and plain letters

    @classmethod
    def of(cls, subject: Subject) -> "VocabularySurvey":
        oracle = subject.oracle
        vocab = oracle.vocab()
        ids = sorted(vocab.values())
        alone = dict(zip(ids, oracle.decode_batch([[i] for i in ids])))
        broken = [i for i in ids if alone[i] == REPLACEMENT_CHARACTER]
        letters = [i for i in ids if len(alone[i]) == 1 and alone[i].isascii() and alone[i].isalpha()
                   and i not in oracle.special_ids]
        return cls(vocab, ids, sorted(oracle.special_ids), broken,
                   byte_ids=sorted(i for token, i in vocab.items() if BYTE_TOKEN.fullmatch(token)),
                   witnesses=_spread(broken, WITNESS_SAMPLE) + _spread(letters, WITNESS_SAMPLE))

    def spelled(self, char: str) -> list[int]:
        """Ids spelling ``char`` one UTF-8 byte per token (byte fallback or byte level); [] if none can."""
        data = char.encode("utf-8")
        for tokens in ([f"<0x{byte:02X}>" for byte in data], BYTE_LEVEL.pre_tokenize_str(char)[0][0]):
            if len(tokens) == len(data) and all(token in self.vocab for token in tokens):
                return [self.vocab[token] for token in tokens]
        return []


def _spread(items: list[int], count: int) -> list[int]:
    return items[:: max(1, len(items) // count)][:count]


def vocabulary_survey(subject: Subject) -> VocabularySurvey:
    if "vocabulary_survey" not in subject.cache:
        subject.cache["vocabulary_survey"] = VocabularySurvey.of(subject)
    return subject.cache["vocabulary_survey"]


def _random_ids(rng: random.Random, survey: VocabularySurvey, real: list[list[int]]) -> list[int]:
    """Ids mixed from the whole vocabulary, stray and byte tokens, specials, pieces of real text and
    characters spelled byte by byte (sometimes cut short)."""
    pools = [pool for pool in (survey.ids, survey.broken_ids, survey.byte_ids, survey.special_ids) if pool]
    ids: list[int] = []
    length = rng.randint(1, MAX_RANDOM_IDS)
    while len(ids) < length:
        kind = rng.random()
        if real and kind < 0.2:
            source = rng.choice(real)
            start = rng.randrange(len(source))
            ids += source[start:start + rng.randint(1, 6)]
        elif kind < 0.4 and (spelled := survey.spelled(rng.choice(MULTI_BYTE_CHARACTERS))):
            ids += spelled[: rng.randint(1, len(spelled))] if rng.random() < 0.3 else spelled
        else:
            ids.append(rng.choice(rng.choice(pools)))
    return ids


def _random_splits(rng: random.Random, length: int) -> list[int]:
    return sorted(rng.randint(0, length) for _ in range(rng.randint(0, length + 1)))


def _prompt_cut(rng: random.Random, ids: list[int], survey: VocabularySurvey) -> int:
    """Where a prompt ends: none, anywhere, or (when there is one) right after a stray byte token."""
    if len(ids) < 2 or rng.random() < 0.6:
        return 0
    broken = set(survey.broken_ids)
    mid_character = [i + 1 for i, token_id in enumerate(ids[:-1]) if token_id in broken]
    return rng.choice(mid_character) if mid_character and rng.random() < 0.5 else rng.randint(1, len(ids) - 1)


def _stops_for(rng: random.Random, text: str, specials: list[str]) -> list[str]:
    """Stops that often occur: slices of the text, special tokens, newlines; and one that never does."""
    def pick() -> str:
        kind = rng.randrange(4)
        if kind == 0 and text:
            start = rng.randrange(len(text))
            return text[start:start + rng.randint(1, 8)]
        if kind == 1 and specials:
            return rng.choice(specials)
        if kind == 2:
            return "never occurs \x00"
        return rng.choice(["\n", "\n\n", ".", " ", "User:", "```"])
    return [pick() for _ in range(rng.randint(0, 4))]


def _sequences(subject: Subject, budget: Budget, rng: random.Random) -> Iterator[list[int]]:
    from .cases import corpus_snippets  # cases.py calls stream_cases, so import it only when used
    survey = vocabulary_survey(subject)
    real = [ids for ids in (subject.oracle.encode(text) for text in corpus_snippets(budget)) if ids]
    yield from real
    for _ in range(budget.random_id_sequences):
        yield _random_ids(rng, survey, real)


def _detokenizer_cases(family: Family, budget: Budget, rng: random.Random, subject: Subject) -> Iterator[Case]:
    survey = vocabulary_survey(subject)

    def case(prop: str, ids: list[int], splits: list[int], skip: bool, prompt: list[int]) -> Case:
        return Case("detokenizer", prop, family.name,
                    {"ids": ids, "splits": splits, "skip_special_tokens": skip, "prompt_ids": prompt})

    for sequence in _sequences(subject, budget, rng):
        cut = _prompt_cut(rng, sequence, survey)
        prompt, ids = sequence[:cut], sequence[cut:]
        skip = rng.random() < 0.5
        one_by_one = list(range(1, len(ids)))
        if len(ids) <= DECODE_STREAM_MAX_IDS:
            yield case("decode_stream", ids, one_by_one, skip, prompt)
        yield case("stream", ids, one_by_one, skip, prompt)
        for _ in range(budget.stream_splits - 1):
            yield case("stream", ids, _random_splits(rng, len(ids)), rng.random() < 0.5, prompt)
    for token_id in survey.ids[:: budget.sweep_stride]:
        yield case("stream", [token_id], [], False, [])


def _stop_cases(family: Family, budget: Budget, rng: random.Random, subject: Subject) -> Iterator[Case]:
    specials = [subject.oracle.id_to_token(i) for i in vocabulary_survey(subject).special_ids]
    for ids in _sequences(subject, budget, rng):
        skip = rng.random() < 0.5
        text = subject.oracle.decode(ids, skip)
        for _ in range(budget.stream_splits):
            yield Case("stops", "stream", family.name, {
                "text": text, "stops": _stops_for(rng, text, specials),
                "splits": _random_splits(rng, len(text)), "include_stop": rng.random() < 0.5})
        yield Case("stops", "pipeline", family.name, {
            "ids": ids, "splits": _random_splits(rng, len(ids)), "skip_special_tokens": skip,
            "stops": _stops_for(rng, text, specials), "include_stop": rng.random() < 0.5})


CASE_BUILDERS = {"detokenizer": _detokenizer_cases, "stops": _stop_cases}


def stream_cases(family: Family, component: str, budget: Budget, seed: int, subject: Subject) -> list[Case]:
    """Every case of ``component`` (detokenizer or stops) for one family under ``budget``."""
    build = CASE_BUILDERS[component]
    return list(build(family, budget, random.Random(f"{seed}/{family.name}/{component}"), subject))
