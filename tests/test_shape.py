"""The shape of a difference names a divergence's kind, so that one bug gives one signature.

The examples are implementations with one bug each, some of the mutation catalogue and some it
lacks (tests/one_bug/), each checked on every quick case of one family as ``textbound check`` would.
A run's signatures are the kinds its checks return (minimizing keeps a divergence's signature).
"""
from __future__ import annotations

import functools

import pytest

from textbound.checks import Subject, case_source, run_check
from textbound.checks.detokenizer import premature_kind
from textbound.checks.stops import _other_stop_kind, _probed_kind, _released_kind, outcome_kind
from textbound.checks.tokenizer import _shared_neighbour
from textbound.families import build_family, embedded_family
from textbound.naming.counterfactuals import added_tokens_read_as_text, plain_ids, text_readings
from textbound.naming.shape import Named, Vocabulary, ids_shape, stream_shape, text_shape
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import Implementation


@pytest.mark.parametrize(("expected", "actual", "shape"), [
    (" Hello", "Hello", "drops ' ' at the start"),
    ("    for", "   for", "drops ' ' at the start"),  # one of a run of spaces: the run's first
    ("a b", "ab", "drops ' ' inside the text"),
    ("Hello.", "Hello .", "inserts ' ' before punctuation"),
    ("a\n", "a", "drops whitespace at the end"),
    ("a \u2028", "a", "drops whitespace at the end"),  # one cleaning, whichever spaces it met
    ("\n \n", "\n", "drops whitespace at the end"),
    ("  ", "", "drops ' ' at the start"),  # spaces alone, lost at the start or the end: told as a leading space
    ("\u00e9", "e\u0301", "text not NFC-normalized"),
    ("cafe", "cafe\u0301", "keeps accents on ASCII letters"),
    ("ab", "a\ufffd", "replaces ASCII letters by U+FFFD"),
    ("Ab", "ab", "lowercases ASCII letters"),
    ("1", "x", "replaces digits by ASCII letters"),
    ("a  b", "a b", "drops ' ' inside the text"),  # told by what follows the run, not by the run
    ("a .", "a  .", "inserts ' ' before punctuation"),
    ("\ufffd\ufffd\ufffd", "A\ufffd\x17", "decodes a run the oracle shows as U+FFFD otherwise"),
    ("\ufffd\ufffd", "\ufffd", "decodes a run the oracle shows as U+FFFD otherwise"),
    ("a\ufffd", "a", "drops U+FFFD at the end"),  # an unfinished character: another bug
])
def test_text_shapes(expected, actual, shape):
    assert text_shape(expected, actual) == shape


@pytest.fixture(scope="module")
def gpt2():
    vocabulary = Vocabulary(build_family("gpt2"))
    return vocabulary, vocabulary.tokenizer.encode


def test_named_strings_tell_a_difference():
    added = Named("an added token", ("</s>", "[CLS]"), recased=True)
    assert text_shape("a a", "a </s> a", added) == "inserts an added token"
    assert text_shape("a</s>", "a </s>", added) == "inserts ' ' before an added token"
    assert text_shape(" </s>", "  </s>", added) == "inserts ' ' at the start"  # the start tells more
    assert text_shape("[CLS] a", "[cls] a", added) == text_shape("a", "[cls] a", added) == \
        "gives an added token in another case"
    cased = Named("an added token", ("Wellmoor",), recased=True)  # normalized: both sides decode it lowercased
    assert text_shape("wellmoor [CLS]", "wellmoor[CLS]", cased) == "drops ' ' before punctuation"


def test_ids_shapes(gpt2):
    vocabulary, encode = gpt2
    ids = encode("say 12 things").ids
    assert ids_shape(ids, ids[:-1], vocabulary) == "drops tokens at the end"
    assert ids_shape(ids, ids + ids[:1], vocabulary) == "adds tokens at the end"
    assert ids_shape(encode(" a").ids, encode("a").ids, vocabulary) == "drops ' ' at the start"
    word = encode("hello").ids
    letters = [vocabulary.tokenizer.token_to_id(c) for c in "hello"]
    assert ids_shape(word, letters, vocabulary) == "splits ASCII letters differently"
    special = encode("<|endoftext|>").ids
    spelled = [i for c in "<|endoftext|>" for i in encode(c).ids]
    assert ids_shape(special, spelled, vocabulary) == "does not split off an added token"
    assert ids_shape(spelled, special, vocabulary) == "splits off an added token the oracle reads as text"
    assert ids_shape(special + word, word, vocabulary) == "drops an added token at the start"
    assert ids_shape(word, word + special, vocabulary) == "adds tokens at the end"
    assert ids_shape(word + word, word + special + word, vocabulary) == "adds an added token in the middle"
    assert ids_shape(ids, [-1], vocabulary) == "gives ids outside the vocabulary"


def test_ids_of_a_character_split_over_byte_tokens_are_described_whole(gpt2):
    vocabulary, encode = gpt2
    ids = encode("lé").ids
    assert vocabulary.covered(ids, len(ids) - 1, len(ids)) == "é"


@pytest.mark.parametrize(("text", "reading", "rewritten"), [
    ("ab\u00a0cd", "reads Unicode spaces as ' '", "ab cd"),
    ("a\u2028b\x85c", "reads Unicode line breaks as '\\n'", "a\nb\nc"),  # one class, whatever the categories
    ("\ufeffab", "drops format characters at the start", "ab"),
    ("\ufeff\ufeff", "drops format characters at the start", "\ufeff"),
])
def test_a_class_of_characters_is_read_otherwise_first_as_its_own(text, reading, rewritten):
    first = next(text_readings(text))
    assert (first.description, first.rewrite(text)) == (reading, rewritten)


def test_ascii_letters_digits_and_whitespace_are_never_read_otherwise():
    assert list(text_readings("a b\tc\n1.")) == []


def test_added_tokens_read_as_text_are_found_whichever_they_are():
    vocabulary = Vocabulary(build_family("sentencepiece"))
    oracle = vocabulary.tokenizer
    both = oracle.encode("<s><s>", add_special_tokens=False).ids
    second_as_text = both[:1] + plain_ids(oracle, "<s>")  # "▁" and "<s>", a piece of the model's vocabulary too
    assert added_tokens_read_as_text(oracle, "<s><s>", second_as_text) == ((3, 6),)
    assert added_tokens_read_as_text(oracle, "<s><s>", both) is None  # the oracle's own ids
    assert added_tokens_read_as_text(oracle, "<s><s>", both[:1]) is None  # a token dropped is not read as text


def test_the_neighbour_every_pair_shares_tells_where():
    assert _shared_neighbour({("a", "."), ("7", "."), ("", ".")}) == ("after", ".")
    assert _shared_neighbour({("<s>", "a"), ("<s>", "")}) == ("before", "<s>")
    assert _shared_neighbour({("a", "."), ("7", "a")}) is None
    assert _shared_neighbour({("a", ".")}) is None  # one neighbourhood cannot tell which side matters


# (implementation, family, component): some of the catalogue, some it lacks (tests/one_bug/)
ONE_BUG = [
    ("textbound.mutants.tokenizer_nfc_skipped", "qwen", "tokenizer"),
    ("textbound.mutants.tokenizer_merge_ranks_ignored", "llama3", "tokenizer"),  # whichever characters a word holds
    ("textbound.mutants.tokenizer_prefix_space_ignored", "roberta", "tokenizer"),
    ("textbound.mutants.tokenizer_strip_accents_default", "wordpiece", "tokenizer"),
    ("textbound.mutants.tokenizer_normalized_ignored", "bert", "tokenizer"),  # named by the flag the oracle then reads otherwise
    ("textbound.mutants.tokenizer_normalized_ignored", "sentencepiece", "tokenizer"),  # one flag, whichever property shows it
    ("textbound.mutants.chat_trim_ascii_only", "llama3", "chat"),  # the family's own template trims each message
    ("tests.one_bug.chat_bos_token_empty", "llama3", "chat"),  # its template writes the BOS unguarded
    ("textbound.mutants.tokenizer_skip_special_ignored", "qwen", "tokenizer"),
    ("textbound.mutants.tokenizer_split_behavior_ignored", "splitters", "tokenizer"),  # named by the option, whichever Split
    ("textbound.mutants.tokenizer_trailing_whitespace_collapsed", "gpt2", "tokenizer"),  # whichever spaces the text ends with
    ("tests.one_bug.decode_drops_leading_space", "gpt2", "tokenizer"),
    ("tests.one_bug.ascii_letters", "llama3", "tokenizer"),
    ("tests.one_bug.lowercase_ascii", "bert", "tokenizer"),
    ("textbound.mutants.tokenizer_added_before_punctuation", "wordlevel", "tokenizer"),  # told by the neighbour where it shows
    ("textbound.mutants.tokenizer_added_adjacent", "sentencepiece", "tokenizer"),  # the token read as text gives its own id
    ("textbound.mutants.tokenizer_nbsp_as_space", "roberta", "tokenizer"),  # named by the class read otherwise
    ("textbound.mutants.tokenizer_bom_stripped", "word_suffix", "tokenizer"),
    ("textbound.mutants.tokenizer_unicode_line_breaks", "unigram", "tokenizer"),  # where "\n" and " " are alike
    ("tests.one_bug.stageless_no_normalizer", "bert", "tokenizer"),
    ("textbound.mutants.stops_include_stop_ignored", "gpt2", "stops"),
    ("textbound.mutants.stops_within_delta", "metaspace", "stops"),  # a stop released before it completes, in both checks
    ("textbound.mutants.stops_earliest_start", "llama3", "stops"),
    ("tests.one_bug.stops_finish_drops_held", "gpt2", "stops"),
    ("tests.one_bug.stops_endswith_only", "gpt2", "stops"),  # a stop missed, though one starting earlier ends a delta
    ("tests.one_bug.stops_first_listed", "wordpiece", "stops"),  # earlier or later than the reference's, ending with it
    ("tests.one_bug.stops_whole_delta", "gpt2", "stops"),  # the delta ending at the stop or going on
    ("textbound.mutants.detokenizer_skip_special_ignored", "sentencepiece", "detokenizer"),
    ("textbound.mutants.detokenizer_prompt_ignored", "sentencepiece", "detokenizer"),
    ("textbound.mutants.detokenizer_per_token", "wordlevel", "detokenizer"),
    ("textbound.mutants.detokenizer_no_context", "sentencepiece", "detokenizer"),
    ("textbound.mutants.detokenizer_unfinished_released", "gpt2", "detokenizer"),
    ("tests.one_bug.deltas_lstripped", "sentencepiece", "detokenizer"),
    ("tests.one_bug.spaces_around_special", "roberta", "detokenizer"),
]


@functools.cache
def component_signatures(impl: str, family: str, component: str) -> frozenset[str]:
    """The signatures of every quick case of ``component`` on ``family``, as a run records them."""
    subject = Subject(family, build_family(family), Implementation(impl))
    return frozenset(found.signature for case in case_source(embedded_family(family), component, BUDGETS["quick"], 0)
                     if (found := run_check(subject, case)) is not None)


@pytest.mark.parametrize(("impl", "family", "component"), ONE_BUG)
def test_one_bug_gives_one_signature_two_at_most(impl, family, component):
    """Over the whole component, every property: a streaming bug shows in each property that
    streams (stream, pipeline, decode_stream) by what the stream showed, never by the characters
    the case drew, and decode_stream leaves to the stream case of the same input what the whole
    decode already contradicts."""
    signatures = component_signatures(impl, family, component)
    assert 1 <= len(signatures) <= 2, sorted(signatures)


@pytest.mark.parametrize(("impl", "family", "component", "signature"), [
    ("textbound.mutants.detokenizer_prompt_ignored", "sentencepiece", "detokenizer",
     "detokenizer/stream/stream decodes the ids without the prompt"),
    ("textbound.mutants.detokenizer_per_token", "wordlevel", "detokenizer",
     "detokenizer/stream/stream decodes each piece without the text before it"),
    ("textbound.mutants.tokenizer_split_behavior_ignored", "splitters", "tokenizer",
     "tokenizer/tokenizer.json/reads every Split's behavior as \"Isolated\""),
    ("textbound.mutants.tokenizer_trailing_whitespace_collapsed", "gpt2", "tokenizer", "tokenizer/decode/text: drops whitespace at the end"),
    ("textbound.mutants.tokenizer_nbsp_as_space", "roberta", "tokenizer", "tokenizer/encode/ids: reads Unicode spaces as ' '"),
    ("textbound.mutants.tokenizer_unicode_line_breaks", "unigram", "tokenizer",
     "tokenizer/encode/ids: reads Unicode line breaks as '\\n'"),
    ("textbound.mutants.tokenizer_bom_stripped", "word_suffix", "tokenizer",
     "tokenizer/encode/ids: drops format characters at the start"),
    ("textbound.mutants.tokenizer_added_before_punctuation", "wordlevel", "tokenizer",
     "tokenizer/encode/ids: does not split off an added token before punctuation"),
    ("textbound.mutants.tokenizer_added_adjacent", "sentencepiece", "tokenizer",
     "tokenizer/encode/ids: does not split off an added token after an added token"),
    ("tests.one_bug.stageless_no_normalizer", "bert", "tokenizer", "tokenizer/tokenizer.json/skips the normalizer"),
    ("textbound.mutants.tokenizer_merge_ranks_ignored", "bert", "tokenizer",  # with the continuing-subword prefix
     "tokenizer/tokenizer.json/reads the BPE merges as one rank: the leftmost pair joining into a token merges first"),
    ("textbound.mutants.tokenizer_normalized_ignored", "sentencepiece", "tokenizer",  # in encode, decode and id_to_token
     "tokenizer/tokenizer.json/reads every added token's normalized as true"),
    ("tests.one_bug.chat_bos_token_empty", "llama3", "chat",  # transformers raises where it is left out
     "chat/render/renders without the variable bos_token"),
    ("textbound.mutants.stops_within_delta", "gpt2", "stops", "stops/stream/releases text that may begin a stop"),
    ("textbound.mutants.stops_within_delta", "metaspace", "stops", "stops/pipeline/releases text that may begin a stop"),
    ("tests.one_bug.stops_endswith_only", "gpt2", "stops", "stops/pipeline/missed a stop"),
    ("tests.one_bug.stops_first_listed", "llama3", "stops", "stops/stream/stopped at a stop string by its place in the list"),
    ("tests.one_bug.stops_whole_delta", "gpt2", "stops", "stops/pipeline/releases text after the stop string in its delta"),
    ("textbound.mutants.stops_earliest_start", "llama3", "stops", "stops/pipeline/stopped at a stop string that starts earlier"),
])
def test_a_bug_is_named_by_what_it_does(impl, family, component, signature):
    """The kind a counterfactual reading (a stream decoded without its prompt, a pipeline option
    read otherwise on every node of its type, a stop followed by more text in its delta) or a
    widened shape gives: the bug's own words."""
    assert signature in component_signatures(impl, family, component)


# Two bugs of one component still get signatures of their own where a kind was widened to one
# bug's; they may share one where an input cannot tell them apart (a decode of spaces alone, lost
# at its start or at its end).
TWO_BUGS = [
    ("textbound.mutants.tokenizer_trailing_whitespace_collapsed", "tests.one_bug.decode_drops_leading_space", "gpt2", "tokenizer"),
    ("textbound.mutants.tokenizer_split_behavior_ignored", "textbound.mutants.tokenizer_nfc_skipped", "splitters", "tokenizer"),
    # classes of characters read otherwise, and the neighbour an added token is read as text by
    ("textbound.mutants.tokenizer_nbsp_as_space", "textbound.mutants.tokenizer_unicode_line_breaks", "roberta", "tokenizer"),
    ("textbound.mutants.tokenizer_nbsp_as_space", "textbound.mutants.tokenizer_bom_stripped", "roberta", "tokenizer"),
    ("textbound.mutants.tokenizer_unicode_line_breaks", "textbound.mutants.tokenizer_bom_stripped", "roberta", "tokenizer"),
    ("textbound.mutants.tokenizer_added_before_punctuation", "textbound.mutants.tokenizer_added_adjacent", "wordlevel", "tokenizer"),
    ("textbound.mutants.tokenizer_added_after_digit", "textbound.mutants.tokenizer_added_after_newline", "wordlevel", "tokenizer"),
    ("textbound.mutants.tokenizer_added_adjacent", "textbound.mutants.tokenizer_normalized_ignored", "sentencepiece", "tokenizer"),
    ("textbound.mutants.stops_within_delta", "textbound.mutants.stops_earliest_start", "llama3", "stops"),
    ("textbound.mutants.stops_within_delta", "textbound.mutants.stops_fixed_holdback", "gpt2", "stops"),
    ("tests.one_bug.stops_endswith_only", "textbound.mutants.stops_earliest_start", "gpt2", "stops"),
    ("tests.one_bug.stops_first_listed", "textbound.mutants.stops_earliest_start", "llama3", "stops"),
    ("tests.one_bug.stops_first_listed", "textbound.mutants.stops_wrong_stop_string", "unigram", "stops"),
    ("tests.one_bug.stops_whole_delta", "tests.one_bug.stops_endswith_only", "gpt2", "stops"),
    ("textbound.mutants.detokenizer_prompt_ignored", "textbound.mutants.detokenizer_skip_special_ignored", "sentencepiece", "detokenizer"),
    ("textbound.mutants.detokenizer_per_token", "textbound.mutants.detokenizer_unfinished_released", "gpt2", "detokenizer"),
    ("tests.one_bug.deltas_lstripped", "tests.one_bug.spaces_around_special", "roberta", "detokenizer"),
]


@pytest.mark.parametrize(("one", "other", "family", "component"), TWO_BUGS)
def test_two_bugs_give_different_signatures(one, other, family, component):
    mine, theirs = component_signatures(one, family, component), component_signatures(other, family, component)
    assert mine and theirs and mine != theirs, (sorted(mine), sorted(theirs))


@pytest.mark.parametrize(("expected", "actual", "kind"), [
    ("ab##", "ab", "output: drops the stop string"),
    ("ab", "ab##", "output: keeps the stop string"),
    ("ab", "ab#", "output: keeps part of a stop string"),
    ("abc", "ab", "stopped where the reference does not"),
    ("ab", "abc", "missed a stop"),
])
def test_stop_outcomes_are_told_by_the_stop_string(expected, actual, kind):
    assert outcome_kind(expected, actual, ["##"]) == kind


def _outcome(output, stop):
    return {"output": output, "stopped": True, "stop_string": stop}


@pytest.mark.parametrize(("expected", "actual", "include", "kind"), [
    # "Hello, world" with stops "world" and "or": the reference's "or" completes first
    (_outcome("Hello, w", "or"), _outcome("Hello, ", "world"), False, "stopped at a stop string that starts earlier"),
    (_outcome("Hello, wor", "or"), _outcome("Hello, world", "world"), True, "stopped at a stop string that starts earlier"),
    (_outcome("size ", "got = "), _outcome("size got ", "= "), False, "missed a stop"),  # a later one caught
    (_outcome("a", "<m"), _outcome("a", "<mask>"), False, "missed a stop"),  # the same place, completing later
    (_outcome("abc", "bc"), _outcome("abc", "c"), True, None),  # another stop reported where it stopped
    (_outcome("abSTOP", "STOP"), _outcome("ab", "STOP"), True, None),  # include_stop ignored: the output tells
    (_outcome("ab", "STOP"), _outcome("ab", None), False, None),
    (_outcome("a\n", "\n"), _outcome("a ", "\n"), True, None),  # its stop shown otherwise: the output tells
])
def test_a_stream_stopped_elsewhere_is_told_by_where_its_stop_is(expected, actual, include, kind):
    assert _other_stop_kind(expected, actual, include) == kind


def _probed(output, stop, past_stop=False):
    return {"output": output, "stop_string": stop, "past_stop": past_stop}


def _lowest_start(stops, include):  # "xabcd\ue000" in one delta through a checker taking the stop that starts first
    return _probed("xabcd" if include else "x", "abcd")


def _first_listed(stops, include):  # ... through one taking the stop listed first
    return _lowest_start(stops, include) if stops[0] == "abcd" else _probed("xab" if include else "xa", "b")


def _at_delta_ends(stops, include):  # ... through one looking for stops only where a delta ends
    return _probed("xabcd", None)


def _whole_delta(stops, include):  # ... through one releasing all of the delta a stop completes in
    return _probed("xabcd\ue000", "b", past_stop=True)


def _names_first_listed(stops, include):  # "xbc\ue000", stops "c" and "bc": cut right, named by the list
    return _probed("xbc" if include else "x", next(s for s in stops if s in ("c", "bc")))


@pytest.mark.parametrize(("kind", "stops", "actual", "probe", "probed"), [
    # "xabcd" in one delta, stops "abcd" and "b" (the reference gives "xa"): three checkers giving "x"
    ("stopped at a stop string that starts earlier", ["abcd", "b"], _outcome("x", "abcd"), _lowest_start,
     "stopped at a stop string that starts earlier"),
    ("stopped at a stop string that starts earlier", ["abcd", "b"], _outcome("x", "abcd"), _first_listed,
     "stopped at a stop string by its place in the list"),
    ("stopped at a stop string that starts earlier", ["abcd", "b"], _outcome("x", "abcd"), _at_delta_ends,
     "missed a stop"),
    ("stopped at a stop string that starts earlier", ["abcd", "b"], _outcome("x", "abcd"),
     lambda stops, include: None, "missed a stop"),
    # and one giving "xabcd", the reference's stop named
    ("missed a stop", ["abcd", "b"], _outcome("xabcd", "b"), _whole_delta, "releases text after the stop string in its delta"),
    ("missed a stop", ["abcd", "b"], _outcome("xabcd", "b"), _at_delta_ends, "missed a stop"),
    ("reports another stop string", ["c", "bc"], _outcome("x", "c"), _names_first_listed, "reports another stop string"),
])
def test_a_stop_elsewhere_is_told_by_the_probe(kind, stops, actual, probe, probed):
    expected = _outcome("xa", "b") if "b" in stops else _outcome("x", "bc")
    assert _probed_kind(kind, expected, actual, stops, probe) == probed


def test_text_released_before_a_stop_completes_is_not_a_stop_missed():
    assert _released_kind("a", "ab", "ab", ["bc"]) == "releases text that may begin a stop"
    assert _released_kind("a", "ab", "abc", ["bc"]) == "missed a stop"


def test_shown_text_is_told_by_what_the_stream_showed():
    assert premature_kind("a b c", "ab") == "shown text the whole decode changes: drops ' '"
    assert premature_kind("a b c", "a bX") == "shown text the whole decode changes: inserts text"
    assert premature_kind("ab", "aab") == "shown text the whole decode changes: repeats text"
    assert premature_kind("é", "\ufffd") == premature_kind("\ufffd\ufffd", "A") == \
        "shown a byte run otherwise than the whole decode"
    added = Named("an added token", ("</s>",))
    assert stream_shape("a b", "a </s>", added) == "inserts an added token"
    # spaces a stream drops or adds, whatever it drew around them; U+FFFD given twice is a byte run
    assert premature_kind(" \ufffd", "\ufffd") == premature_kind("a\n b", "a\nb") == \
        "shown text the whole decode changes: drops ' '"
    assert premature_kind("a<b", "a <") == "shown text the whole decode changes: inserts ' '"
    assert premature_kind("a b", "a  ") == "shown text the whole decode changes: repeats text"  # a space sent twice
    assert premature_kind("\ufffd\u0301", "\ufffd\ufffd") == "shown a byte run otherwise than the whole decode"
