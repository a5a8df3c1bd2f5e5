"""Hypothesis strategies for tokenizer inputs: text, text around special tokens, id sequences.

Every strategy is built from small parts whose first alternative is the simplest, so a failing
example shrinks towards short ASCII text and low ids. The runner uses the same strategies through
``draw_examples``, which replays Hypothesis from a seed instead of keeping a second generator.
"""
from __future__ import annotations

import string
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

# Every character str.isspace() accepts: Unicode's White_Space and the separators U+001C..U+001F,
# which Python counts as space and tokenizers (Rust's is_whitespace) do not.
ISSPACE_CHARACTERS = (" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                      "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# Characters that look like whitespace to a reader or a tokenizer but are not White_Space.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u180e\u00ad\u034f"

# Characters with a history of tripping tokenizers, grouped by what they exercise.
TRICKY_CHARACTERS = "".join([
    "\u0301\u0308\u0327\u0323\u0345\u20dd\u302a\u1ab0",    # combining marks (reordering, NFC)
    "éÅ\u212bǅﬁßẞİıΣςσŉǰ",                                  # composition and case mapping
    "Ⅻ①²½Ǆ㎏ｶＡ가\u1100\u1161",                               # compatibility forms, Hangul
    "שعกக\u0905\u09bf中日アのጀაԱжΩ",                           # scripts, spacing marks
    "٣৩１Ⅷ",                                                  # digits outside ASCII
    "¿¡«»—…、。「」",                                            # punctuation outside ASCII
    "\x00\x01\x7f\x9f",                                       # controls
    "ĠĊĉ▁Ã©",                                                 # byte-level and metaspace alphabet
    "\ue000\ufffd\ufffe\uffff",                               # private use, replacement, noncharacters
    "😀👍🏽\U0001f1fa\U0001f1f8❤\ufe0f",                        # emoji, modifiers, flags, selectors
    "\U00020000\U000e0041\U000f0000\U0010ffff\U0001d400",     # astral: CJK, tags, private use, math
    # Assigned in Unicode 15 to 17, after Python 3.11's tables: the oracle's tables and `regex`'s disagree.
    "\U00011f00\U0001e4d0\U00031350\U0002ebf0\U00011dcf\U0001e5d0\U00016100\U000105c0\U0001cc00",
])

FRAGMENTS = (
    "hello", " world", "'s", "'ll", "don't", "I'M", "123", "12345678", "3.14", "1,000", "\r\n", "  ",
    "...", "!!", "▁▁", "ĠĠ", "<0x41>", "<unk>", "<s>", "</s>", "<|endoftext|>", "[CLS]", "##ing",
    "</w>", "a\u0301", "e\u0301\u0327", "👨\u200d👩\u200d👧", "1\ufe0f\u20e3", "　", "\t\t", "\n\n\n",
)

NORMAL_FORMS = (None, "NFC", "NFD")
DRAW_CHUNK = 16  # examples draw_examples takes from one Hypothesis run


def whitespace_runs(max_size: int = 6) -> st.SearchStrategy[str]:
    """Runs of spaces, tabs, newlines, Unicode spaces and zero-width look-alikes."""
    return st.text(alphabet=st.sampled_from(ISSPACE_CHARACTERS + INVISIBLE), min_size=1, max_size=max_size)


def any_character() -> st.SearchStrategy[str]:
    """Any code point of any plane and category except lone surrogates (which are not text)."""
    return st.characters(exclude_categories=("Cs",))


def text_parts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8),
        st.sampled_from(FRAGMENTS),
        whitespace_runs(),
        st.sampled_from(string.punctuation),
        st.sampled_from(TRICKY_CHARACTERS),
        any_character(),
    )


def _in_normal_form(text: str, form: str | None) -> str:
    return unicodedata.normalize(form, text) if form else text


def unicode_text(max_parts: int = 12) -> st.SearchStrategy[str]:
    """Mixed text: ASCII words, fragments, whitespace, tricky and arbitrary characters, as
    written, NFC or NFD."""
    text = st.lists(text_parts(), max_size=max_parts).map("".join)
    return st.tuples(text, st.sampled_from(NORMAL_FORMS)).map(lambda pair: _in_normal_form(*pair))


def look_alikes(tokens: Collection[str]) -> list[str]:
    """Near misses of each token: cut, re-cased, doubled, split by a space, prefixed."""
    near: set[str] = set()
    for token in tokens:
        half = len(token) // 2
        near.update({token[:-1], token[1:], token[:half], token.upper(), token.lower(), token + token[-1:],
                     token[:1] + token, f"{token[:half]} {token[half:]}", "▁" + token, "Ġ" + token})
    return sorted(near - set(tokens) - {""})


def text_with_specials(special_tokens: Collection[str], max_parts: int = 8) -> st.SearchStrategy[str]:
    """Added-token strings and their look-alikes interleaved with text, with spaces and newlines
    around them (where lstrip, rstrip and single_word matter)."""
    if not special_tokens:
        return unicode_text(max_parts)
    padding = st.sampled_from(["", " ", "\n", "  ", "\t", " \n", "\n\n", "\u3000"])
    token = st.sampled_from(sorted(special_tokens))
    alikes = look_alikes(special_tokens)
    near = st.one_of(token, st.sampled_from(alikes)) if alikes else token
    padded = st.tuples(padding, near, padding).map("".join)
    return st.lists(st.one_of(padded, unicode_text(max_parts=3)), max_size=max_parts).map("".join)


def utf8_fragments() -> st.SearchStrategy[bytes]:
    """Byte runs: a character's UTF-8 encoding, whole or cut short, or stray high bytes."""
    cut_character = st.tuples(st.characters(min_codepoint=0x80, exclude_categories=("Cs",)), st.integers(0, 3)).map(
        lambda pair: pair[0].encode("utf-8")[:max(1, len(pair[0].encode("utf-8")) - pair[1])])
    return st.one_of(
        st.lists(st.integers(0, 0x7F), min_size=1, max_size=3).map(bytes),
        cut_character,
        st.lists(st.integers(0x80, 0xFF), min_size=1, max_size=3).map(bytes),
    )


def id_sequences(ids: Sequence[int], special_ids: Collection[int] = (),
                 byte_ids: Mapping[int, int] | None = None, max_parts: int = 12) -> st.SearchStrategy[list[int]]:
    """Sequences of known ids, with special ids and, where the vocabulary has byte-fallback
    tokens (``byte_ids``: byte value -> id), byte runs that are often not valid UTF-8."""
    single = [st.sampled_from(ids).map(lambda i: [i])]
    if special_ids:
        single.append(st.sampled_from(sorted(special_ids)).map(lambda i: [i]))
    if byte_ids:
        single.append(utf8_fragments().map(lambda run: [byte_ids[b] for b in run if b in byte_ids]))
    return st.lists(st.one_of(single), max_size=max_parts).map(lambda runs: [i for run in runs for i in run])


def draw_examples(strategy: st.SearchStrategy, n: int, seed_value: int) -> list:
    """``n`` examples of ``strategy``, the same ones for the same seed (and Hypothesis version).

    Hypothesis itself generates them, so the runner sees the distribution pytest explores. A run's
    first example is always the simplest and later ones are mutations of earlier ones, so each
    chunk of examples comes from the second example of its own seeded run, a list drawn at random.
    Not for use inside a Hypothesis test.
    """
    drawn: list = []
    with _without_local_constants():
        for chunk in range(-(-n // DRAW_CHUNK)):
            drawn += _second_example(st.lists(strategy, min_size=DRAW_CHUNK, max_size=DRAW_CHUNK),
                                     seed_value * 1_000_003 + chunk)
    return drawn[:n]


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis draws its examples from the seed alone while inside.

    Outside, Hypothesis mixes into its draws the literals of every imported module it takes for the
    user's own code (any not under site-packages: the whole checkout for an editable install, nothing
    for a wheel, more after any edit), so one seed drew other cases per install, working directory
    and source edit. No setting turns that off (none up to 6.170), so the private function gathering
    them (``providers._get_local_constants``, since 6.131.1) answers "none" here, and the cache of
    constants it fed is emptied on the way in and out. Without that function (a Hypothesis outside
    pyproject's range) the draw goes on as Hypothesis does it, and tests/test_draws.py fails.
    Draws are made in one thread per process (workers are forked), so swapping a module's function
    races with nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
        gather, cache = providers._get_local_constants, providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):
        yield
        return
    none = Constants()
    providers._get_local_constants = lambda: none
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = gather
        cache.clear()


def _second_example(strategy: st.SearchStrategy, seed_value: int):
    examples: list = []

    @seed(seed_value)
    @settings(max_examples=2, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example) -> None:
        examples.append(example)

    collect()
    if len(examples) < 2:
        raise RuntimeError(f"Hypothesis drew no random example of {strategy!r} with seed {seed_value}")
    return examples[-1]
