"""Cases of the streaming components: real and random id sequences, cut into deltas at random,
with prompts that end anywhere (mid-character too) and stop strings that occur in the text; and at
every budget the strata, each case naming its stratum in STRATUM_FIELD: for the detokenizer, each
multi-byte character spelled byte by byte (and a prompt ending inside it) and each special token
and each added token that is not special (kept and skipped), streamed one id per delta, and two to
four of these fed interleaved (textbound.checks.shapes_cases); for stops, a stop at the start, at the end, the
whole text, overlapping or nested stops, a stop's beginning left at the end, with include_stop both
ways, streamed whole and one character per delta, those holding a stop also fed interleaved; and the
stops/pipeline twins of the tools/pipeline strata.

    {"text": "Hello, world.\nGoodbye!", "stops": ["Hello"], "splits": [], "include_stop": true,
     "stratum": "stop at the start, include_stop True, one delta"}
"""
from __future__ import annotations

import random
from collections.abc import Iterator

from ..families import Family
from ..naming.divergence import STRATUM_FIELD, Case
from ..plan.budget import Budget
from .registry import Subject, cases
from .shapes_cases import interleaved_cases, stop_pipeline_twins
from .streaming import VocabularySurvey, random_splits, vocabulary_survey
from .tokenizer_cases import corpus_snippets

# Comparing with DecodeStream decodes the prefix at every step where impl holds text back, which is
# quadratic in the length: whole corpus files are streamed by the "stream" property alone.
DECODE_STREAM_MAX_IDS = 512
MAX_RANDOM_IDS = 24
MULTI_BYTE_CHARACTERS = ("é", "ß", "€", "中", "ﬁ", "\u0301", "😀", "🏽", "𝔘", "\u2028")
STRATUM_WORDS = "Hello world"  # text around a stratum's ids
SPECIAL_STRATA = 3  # special tokens (the first ones by id) each streamed kept and skipped
STOP_TEXT = "Hello, world.\nGoodbye!"
STOP_STRATA = {
    "no stop": [],
    "stop at the start": ["Hello"],
    "stop at the end": ["bye!"],
    "stop is the whole text": [STOP_TEXT],
    "stop of one character": ["\n"],
    "overlapping stops": ["o, wor", "lo, w"],
    "one stop inside another": ["world", "or"],
    "stops ending together, the shorter first": ["d.", "world."],
    "stops ending together, the longer first": ["world.", "d."],
    "stop's beginning left at the end": ["bye!!"],
    "stop that never occurs": ["Goodnight"],
}


def _rng(seed: int, family: Family, component: str) -> random.Random:
    return random.Random(f"{seed}/{family.name}/{component}")


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
    stops = [pick() for _ in range(rng.randint(0, 4))]
    # A stop's own head or tail beside it, anywhere in the list: stops that end (or start) at the
    # same place, where which one cuts and which one is reported depend on the rules.
    longer = [stop for stop in stops if len(stop) > 1]
    if longer and rng.random() < 0.5:
        stop = rng.choice(longer)
        cut = rng.randrange(1, len(stop))
        stops.insert(rng.randrange(len(stops) + 1), stop[cut:] if rng.random() < 0.5 else stop[:cut])
    return stops


def _sequences(subject: Subject, budget: Budget, rng: random.Random) -> Iterator[list[int]]:
    survey = vocabulary_survey(subject)
    real = [ids for ids in (subject.oracle.encode(text) for text in corpus_snippets(budget)) if ids]
    yield from real
    for _ in range(budget.random_id_sequences):
        yield _random_ids(rng, survey, real)


def detokenizer_strata(subject: Subject) -> Iterator[tuple[str, list[int], list[int], bool]]:
    """(stratum, ids, prompt ids, skip_special_tokens): each multi-byte character the vocabulary can
    spell byte by byte, between words and with a prompt ending inside it; each of the first special
    tokens between words and first, kept and skipped; each of the first added tokens that are not
    special between words, kept and skipped (the flag leaves them in the text)."""
    survey, words = vocabulary_survey(subject), subject.oracle.encode(STRATUM_WORDS)
    for char in MULTI_BYTE_CHARACTERS:
        spelled, name = survey.spelled(char), f"U+{ord(char):04X}"
        if len(spelled) > 1:
            yield f"UTF-8 boundaries: {name} spelled byte by byte", words + spelled + words, [], False
            yield f"UTF-8 boundaries: a prompt ending inside {name}", spelled[1:] + words, words + spelled[:1], False
    for special in survey.special_ids[:SPECIAL_STRATA]:
        token = subject.oracle.id_to_token(special)
        for skip in (False, True):
            yield f"special token {token}, skip_special_tokens {skip}", words + [special] + words, [], skip
            yield f"special token {token} first, skip_special_tokens {skip}", [special] + words, [], skip
    # Added tokens that are not special (Qwen's <tool_call> and <think>) stay in the text whatever
    # skip_special_tokens says: a detokenizer skipping them hides a tool parser's markers (vllm#25281).
    decoder = subject.oracle.tokenizer.get_added_tokens_decoder()
    for added in sorted(i for i, token in decoder.items() if not token.special)[:SPECIAL_STRATA]:
        for skip in (False, True):
            yield (f"added token {decoder[added].content} (not special), skip_special_tokens {skip}",
                   words + [added] + words, [], skip)


@cases("detokenizer")
def detokenizer_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "detokenizer")
    survey = vocabulary_survey(subject)

    def case(prop: str, ids: list[int], splits: list[int], skip: bool, prompt: list[int], **named) -> Case:
        return Case("detokenizer", prop, family.name,
                    {"ids": ids, "splits": splits, "skip_special_tokens": skip, "prompt_ids": prompt, **named})

    streams = []
    for stratum, ids, prompt, skip in detokenizer_strata(subject):
        for prop in ("decode_stream", "stream"):
            streams.append(case(prop, ids, list(range(1, len(ids))), skip, prompt, **{STRATUM_FIELD: stratum}))
            yield streams[-1]
    yield from interleaved_cases("detokenizer", family.name, [c.input for c in streams if c.property == "stream"])

    for sequence in _sequences(subject, budget, rng):
        cut = _prompt_cut(rng, sequence, survey)
        prompt, ids = sequence[:cut], sequence[cut:]
        skip = rng.random() < 0.5
        one_by_one = list(range(1, len(ids)))
        if len(ids) <= DECODE_STREAM_MAX_IDS:
            yield case("decode_stream", ids, one_by_one, skip, prompt)
        yield case("stream", ids, one_by_one, skip, prompt)
        for _ in range(budget.stream_splits - 1):
            yield case("stream", ids, random_splits(rng, len(ids)), rng.random() < 0.5, prompt)
    for token_id in survey.ids[:: budget.sweep_stride]:
        yield case("stream", [token_id], [], False, [])


@cases("stops")
def stop_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "stops")
    specials = [subject.oracle.id_to_token(i) for i in vocabulary_survey(subject).special_ids]
    stop_ids = subject.oracle.encode(STOP_TEXT)
    streams = []
    for stratum, stops in STOP_STRATA.items():
        for include in (False, True):
            for cut, splits in (("one delta", []), ("one character per delta", list(range(1, len(STOP_TEXT))))):
                streams.append({"text": STOP_TEXT, "stops": stops, "splits": splits, "include_stop": include,
                                STRATUM_FIELD: f"{stratum}, include_stop {include}, {cut}"})
                yield Case("stops", "stream", family.name, streams[-1])
            yield Case("stops", "pipeline", family.name, {
                "ids": stop_ids, "splits": list(range(1, len(stop_ids))), "skip_special_tokens": False,
                "stops": stops, "include_stop": include, STRATUM_FIELD: f"{stratum}, include_stop {include}, one id per delta"})
    # Stops cut the stream only with a stop in it: those streamed one character per delta hold text the most.
    yield from interleaved_cases("stops", family.name,
                                 [stream for stream in streams if stream["stops"] and stream["splits"]])
    yield from stop_pipeline_twins(family.name, subject)
    for ids in _sequences(subject, budget, rng):
        skip = rng.random() < 0.5
        text = subject.oracle.decode(ids, skip)
        for _ in range(budget.stream_splits):
            yield Case("stops", "stream", family.name, {
                "text": text, "stops": _stops_for(rng, text, specials),
                "splits": random_splits(rng, len(text)), "include_stop": rng.random() < 0.5})
        yield Case("stops", "pipeline", family.name, {
            "ids": ids, "splits": random_splits(rng, len(ids)), "skip_special_tokens": skip,
            "stops": _stops_for(rng, text, specials), "include_stop": rng.random() < 0.5})

