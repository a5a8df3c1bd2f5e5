"""The shape of a difference: what the implementation inserted, dropped or replaced, and where.

A divergence's kind names the shape of its smallest difference, not the Unicode category of the
first character where the sides part, so that one bug gives one signature whatever the input it
shows on (a decode dropping a leading space: ``drops ' ' at the start`` for " a", " 7" and " é"
alike), and delta debugging, which keeps a smaller input only while the signature stays, shrinks
towards the bug rather than towards a character class.

    >>> text_shape(" Hello", "Hello")
    "drops ' ' at the start"
    >>> text_shape("a b", "ab")
    "drops ' ' inside the text"
    >>> text_shape("\\u00e9", "e\\u0301")
    'text not NFC-normalized'

Lists of ids are compared through the text each id stands for (``Vocabulary``): the same text cut
into other tokens is ``splits ... differently``, an added token read as plain text ``does not split
off an added token``, and otherwise the shape of the two texts.
"""
from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .divergence import REPLACEMENT_CHARACTER

ADDED_TOKEN = "\uffff"  # stands for an added token in a text of ids (a noncharacter, never in a token)
LONGEST_ALIGNED = 2000  # characters of the differing middle aligned by difflib; a longer one is replaced whole
REPEATS = "repeats text"  # a stream's delta sent twice, or its first characters
NAMED_CHARACTERS = {" ": "' '", "\t": "'\\t'", "\n": "'\\n'", "\r": "'\\r'",
                    REPLACEMENT_CHARACTER: "U+FFFD", ADDED_TOKEN: "an added token"}
CATEGORY_CLASSES = {"Zs": "Unicode spaces", "Zl": "line separators", "Zp": "line separators",
                    "Cc": "control characters", "Cf": "format characters", "Co": "unassigned characters",
                    "Cn": "unassigned characters", "Cs": "unassigned characters", "M": "marks",
                    "Nd": "digits", "N": "numbers", "P": "punctuation", "S": "symbols"}
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")


def char_class(char: str) -> str:
    """The class a character is described by: ``char_class("é") == "non-ASCII letters"``."""
    if char in NAMED_CHARACTERS:
        return NAMED_CHARACTERS[char]
    category = unicodedata.category(char)
    if category[0] == "L":
        return "ASCII letters" if char.isascii() else "non-ASCII letters"
    return CATEGORY_CLASSES.get(category, CATEGORY_CLASSES.get(category[0], "characters"))


def describe(text: str) -> str:
    """What a stretch of text holds, by class, without counts: ``describe("ab c") == "ASCII letters and ' '"``."""
    classes = sorted(set(map(char_class, text)))  # sorted: "a." and ".a" hold the same classes
    return "mixed text" if len(classes) > 2 else " and ".join(classes)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char)[0] == "M"


def first_change(expected, actual, common_end: bool = True) -> tuple[int, int, int, int]:
    """The first stretch where two sequences differ, as (a0, a1, b0, b1): expected[a0:a1] became
    actual[b0:b1]. Common ends are cut first, so long equal texts cost nothing to align; without
    ``common_end`` only the beginning is (a stream's text is a beginning: its end is not the end's)."""
    prefix = 0
    limit = min(len(expected), len(actual))
    while prefix < limit and expected[prefix] == actual[prefix]:
        prefix += 1
    suffix = 0
    while common_end and suffix < limit - prefix and expected[-1 - suffix] == actual[-1 - suffix]:
        suffix += 1
    a1, b1 = len(expected) - suffix, len(actual) - suffix
    middle_a, middle_b = expected[prefix:a1], actual[prefix:b1]
    if len(middle_a) + len(middle_b) <= LONGEST_ALIGNED:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        tag, i0, i1, j0, j1 = next(op for op in matcher.get_opcodes() if op[0] != "equal")
        return prefix + i0, prefix + i1, prefix + j0, prefix + j1
    return prefix, a1, prefix, b1


def _leftmost(expected, actual, change: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """An insertion or deletion inside a run of what it inserts or deletes, moved to the run's start:
    one space dropped from four is dropped at the first, wherever the common ends left it."""
    a0, a1, b0, b1 = change
    if a0 == a1:
        while b0 > 0 and actual[b0 - 1] == actual[b1 - 1]:
            a0, a1, b0, b1 = a0 - 1, a1 - 1, b0 - 1, b1 - 1
    elif b0 == b1:
        while a0 > 0 and expected[a0 - 1] == expected[a1 - 1]:
            a0, a1, b0, b1 = a0 - 1, a1 - 1, b0 - 1, b1 - 1
    return a0, a1, b0, b1


def _whole_characters(expected: str, actual: str, change: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The change widened over the combining marks around it and the letter they sit on, so that
    "é" against "e" + U+0301 reads as one character replaced, not a mark inserted."""
    a0, a1, b0, b1 = change

    def starts_with_mark(text: str, start: int, end: int) -> bool:
        return start < end and _is_mark(text[start])

    while a0 > 0 and b0 > 0 and expected[a0 - 1] == actual[b0 - 1] != ADDED_TOKEN and (
            starts_with_mark(expected, a0, a1) or starts_with_mark(actual, b0, b1)):
        a0, b0 = a0 - 1, b0 - 1
    while a0 < a1 and b0 < b1 and a1 < len(expected) and b1 < len(actual) and expected[a1] == actual[b1] \
            and _is_mark(expected[a1]):
        a1, b1 = a1 + 1, b1 + 1
    return a0, a1, b0, b1


def _strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not _is_mark(c))


def _replacement(expected: str, actual: str) -> str:
    """How ``expected`` became ``actual``, by the relation between them where there is one."""
    if set(actual) == {REPLACEMENT_CHARACTER}:
        return f"replaces {describe(expected)} by U+FFFD"
    for form in NORMAL_FORMS:
        if unicodedata.normalize(form, actual) == expected:
            return f"text not {form}-normalized"  # one normalizer bug, whatever characters it meets
    for form in NORMAL_FORMS:
        if unicodedata.normalize(form, expected) == actual:
            return f"{form}-normalizes text where the oracle does not"
    if _strip_marks(expected) == actual:
        return f"strips accents from {describe(expected)}"
    if _strip_marks(actual) == expected:
        return f"keeps accents on {describe(expected)}"
    for name, change in (("lowercases", str.lower), ("uppercases", str.upper)):
        if change(expected) == actual:
            return f"{name} {describe(expected)}"
        if change(actual) == expected:
            return f"does not {name.removesuffix('s')} {describe(actual)}"
    return f"replaces {describe(expected)} by {describe(actual)}"


@dataclass(frozen=True)
class Named:
    """Strings a difference is told by rather than by their characters' classes: a family's added
    tokens in a decode, a case's stop strings in a stream (``Named("an added token", ("</s>",))``)."""

    label: str
    strings: tuple[str, ...] = ()
    recased: bool = False  # whether a string shown in another case is a difference of its own

    def held_in(self, text: str) -> bool:
        return any(s and s in text for s in self.strings)

    def starts(self, text: str, at: int) -> bool:
        return any(s and text.startswith(s, at) for s in self.strings)

    def shown_recased(self, actual: str, expected: str = "") -> bool:
        """Whether ``actual`` shows one of the strings in another case and never as it is, more
        often than ``expected`` does (a token both sides show lowercased is no difference):
        ``Named("", ("Ab",), recased=True).shown_recased("ab", "ab c") is False``."""
        def recased(text: str, string: str) -> int:
            return text.casefold().count(string.casefold()) - text.count(string)

        return self.recased and any(s.casefold() != s and s not in actual and recased(actual, s) > recased(expected, s)
                                    for s in self.strings)


NOTHING_NAMED = Named("")


def _where(text: str, start: int, end: int, named: Named = NOTHING_NAMED, whitespace: bool = False) -> str:
    """Where a stretch of ``text`` (or an insertion at ``start`` == ``end``) is: at the start or end
    of the text (or of a run between added tokens), else before a named string, else before what
    follows it: for ``whitespace``, only whether that is punctuation (where decoders clean up spaces)."""
    if start == 0:
        return "at the start"
    if text[start - 1] == ADDED_TOKEN:
        return "after an added token"
    if end == len(text) or text[end] == ADDED_TOKEN:
        return "at the end"
    if named.starts(text, end):
        return f"before {named.label}"
    if whitespace and char_class(text[end]) != "punctuation":
        return "inside the text"  # a space is lost or gained between any two words alike
    return f"before {char_class(text[end])}"


def _run_end(text: str, end: int, char: str) -> int:
    """Where the run of ``char`` starting at ``end`` ends: an insertion or deletion of a run's
    character is the same change anywhere in the run, and is told by what follows the run."""
    while end < len(text) and text[end] == char:
        end += 1
    return end


def _replacement_run(expected: str, actual: str, change: tuple[int, int, int, int]) -> bool:
    """Whether a change is the oracle's U+FFFD run given otherwise (bytes decoded one by one,
    or counted otherwise), not at the end, where a dropped U+FFFD is an unfinished character."""
    a0, a1, b0, b1 = change
    stretch, theirs = expected[a0:a1], actual[b0:b1]
    if not stretch:  # text inserted into a U+FFFD run: the run's bytes read otherwise
        return expected[a0:a0 + 1] == REPLACEMENT_CHARACTER and \
            expected.count(REPLACEMENT_CHARACTER) != actual.count(REPLACEMENT_CHARACTER)
    if set(stretch) != {REPLACEMENT_CHARACTER} or set(theirs) == {REPLACEMENT_CHARACTER}:
        return False
    return bool(theirs) or a1 < len(expected)


def _coarse(text: str, named: Named) -> str:
    """A stretch by what matters to a stream: the whitespace it is, a named string, or text."""
    if named.held_in(text):
        return named.label
    return describe(text) if text and all(c in NAMED_CHARACTERS for c in text) else "text"


STREAM_WHITESPACE = frozenset(" \t\n\r")  # what deltas lose or gain where they meet (U+2028 and the like are characters of their own)


def _bare(text: str) -> str:
    return "".join(c for c in text if c not in STREAM_WHITESPACE)


def whitespace_apart(expected: str, shown: str) -> bool:
    """Whether ``shown``, not a beginning of ``expected``, differs from one by ASCII whitespace
    alone (spaces a stream dropped or added, whatever else the case drew):
    ``whitespace_apart("a b c", "ab") is True``, ``whitespace_apart("a b", "") is False``."""
    return not expected.startswith(shown) and _bare(expected).startswith(_bare(shown))


def _whitespace_shape(expected: str, shown: str) -> str:
    """The whitespace ``shown`` drops or adds against the beginning of ``expected`` holding the same
    other characters; whitespace ``shown`` ends with counts only where the whitespace ``expected``
    has there does not begin with it (a stream may not have shown all of it yet):
    ``_whitespace_shape("a b c", "ab") == "drops ' '"``, ``_whitespace_shape("a b", "a  ") == "inserts ' '"``."""
    core = shown.rstrip("".join(STREAM_WHITESPACE))
    others, end = len(_bare(core)), 0
    while others:
        others -= expected[end] not in STREAM_WHITESPACE
        end += 1
    theirs = Counter(c for c in expected[:end] if c in STREAM_WHITESPACE)
    mine = Counter(c for c in core if c in STREAM_WHITESPACE)
    if theirs == mine:  # apart in the whitespace shown last alone
        trail, run = shown[len(core):], expected[end:len(expected) - len(expected[end:].lstrip("".join(STREAM_WHITESPACE)))]
        theirs, mine = Counter(run), Counter(trail)
    dropped, added = theirs - mine, mine - theirs
    if dropped and not added:
        return f"drops {describe(''.join(dropped))}"
    if added and not dropped:
        return f"inserts {describe(''.join(added))}"
    return "moves whitespace"


def stream_shape(expected: str, shown: str, named: Named = NOTHING_NAMED) -> str:
    """The shape of what a stream showed against the decode it must begin, coarser than
    ``text_shape``: a stream's bug is in how deltas meet (a space dropped, text repeated, a prompt
    not primed), whatever characters the case drew, so classes of letters and contexts are not
    told apart: ``stream_shape("a b c", "ab") == "drops ' '"``, ``stream_shape("ab", "aXb") == "inserts text"``."""
    if any(s and shown.count(s) > expected.count(s) for s in named.strings):
        return f"inserts {named.label}"  # wherever the sides first part: a stream is cut anywhere
    a0, a1, b0, b1 = first_change(expected, shown, False)
    if b1 == len(shown) and b0 < b1:  # what the stream has not shown yet is not replaced: shown text is inserted
        a1 = a0
    change = _whole_characters(expected, shown, _leftmost(expected, shown, (a0, a1, b0, b1)))
    a0, a1, b0, b1 = change
    inserted = shown[b0:b1] if a0 == a1 else ""
    # U+FFFD given once more is a byte run read otherwise, not text repeated
    if inserted and set(inserted) != {REPLACEMENT_CHARACTER} and \
            inserted in (expected[a0 - len(inserted):a0], expected[a0:a0 + len(inserted)]):
        return REPEATS
    if whitespace_apart(expected, shown):
        return _whitespace_shape(expected, shown)  # wherever the deltas met
    parted = next((i for i, (x, y) in enumerate(zip(expected, shown)) if x != y), None)
    if _replacement_run(expected, shown, change) or (parted is not None and expected[parted] == REPLACEMENT_CHARACTER):
        return "decodes a run the oracle shows as U+FFFD otherwise"
    if a0 == a1:
        return f"inserts {_coarse(shown[b0:b1], named)}"
    # Named strings tell only what a stream shows: text it leaves out is cut anywhere, tokens or not.
    if b0 == b1:
        return f"drops {_coarse(expected[a0:a1], NOTHING_NAMED)}"
    return f"replaces {_coarse(expected[a0:a1], NOTHING_NAMED)} by {_coarse(shown[b0:b1], named)}"


def text_shape(expected: str, actual: str, named: Named = NOTHING_NAMED) -> str:
    """The shape of the first difference between two texts (see the module's examples); with
    ``named``, a change holding one of its strings is told by it:
    ``text_shape("a", "a </s>", Named("an added token", ("</s>",))) == "inserts an added token"``."""
    if expected == actual:
        return "no difference"
    if named.shown_recased(actual, expected):
        return f"gives {named.label} in another case"
    change = _whole_characters(expected, actual, _leftmost(expected, actual, first_change(expected, actual)))
    a0, a1, b0, b1 = change
    if _replacement_run(expected, actual, change):
        return "decodes a run the oracle shows as U+FFFD otherwise"
    if a0 == a1:
        return _one_sided("inserts", actual[b0:b1], expected, a0, a0, named)
    if b0 == b1:
        return _one_sided("drops", expected[a0:a1], expected, a0, a1, named)
    return _replacement(expected[a0:a1], actual[b0:b1])


def _one_sided(verb: str, run: str, expected: str, start: int, after: int, named: "Named") -> str:
    """``run`` inserted into ``expected`` at ``start`` (``after == start``) or dropped from
    ``expected[start:after]``, told with where it happened; a run of one character repeated is placed
    by the end of that character's run in ``expected`` (``_run_end``), wherever difflib put it."""
    if named.held_in(run):
        return f"{verb} {named.label}"
    end = _run_end(expected, after, run[0]) if len(set(run)) == 1 else after
    tail = expected[after:].split(ADDED_TOKEN, 1)[0]
    # Trailing whitespace is cleaned (or added) as a whole, whichever spaces the text ends with. Spaces
    # lost from the start of a text of whitespace alone could be lost at either end: they are told
    # as at the start, as a leading space lost anywhere is.
    if run.isspace() and (not tail or tail.isspace()) and not (start == 0 and set(run) == {" "}):
        return f"{verb} whitespace at the end"
    return f"{verb} {describe(run)} {_where(expected, start, end, named, run.isspace())}"


# -- ids: the text each token stands for ---------------------------------------------------------

def _byte_level_chars() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the printable character standing for each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in printable]
    return {**{chr(b): b for b in printable}, **{chr(256 + n): b for n, b in enumerate(shifted)}}


BYTE_LEVEL_CHARS = _byte_level_chars()
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class Vocabulary:
    """A family's token pieces and the bytes each stands for, read from its tokenizer.json.

    >>> gpt2 = Vocabulary(folder)          # a byte-level vocabulary
    >>> gpt2.token_bytes(gpt2.tokenizer.token_to_id("Ġa"))
    b' a'
    """

    def __init__(self, folder: Path):
        import tokenizers

        path = Path(folder) / "tokenizer.json"
        self.tokenizer = tokenizers.Tokenizer.from_file(str(path))
        spec = json.loads(path.read_text(encoding="utf-8"))
        self.byte_level = '"ByteLevel"' in json.dumps(spec.get("decoder"))
        model = spec.get("model") or {}
        self.continuing_prefix = model.get("continuing_subword_prefix")  # WordPiece's "##", some BPEs' too
        unk = model.get("unk_token")
        self.unk_id = model.get("unk_id") if unk is None else self.tokenizer.token_to_id(unk)
        added = self.tokenizer.get_added_tokens_decoder()
        self.added_ids = frozenset(added)
        # what a decode's difference is told by: an added token shown, dropped or recased
        self.added_tokens = Named("an added token", tuple(sorted({t.content for t in added.values()})), recased=True)

    def piece(self, token_id: int) -> str | None:
        """The token's piece; None for an id outside the vocabulary (negative or huge ones too)."""
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            return None
        try:
            return self.tokenizer.id_to_token(token_id)
        except OverflowError:
            return None

    def token_bytes(self, token_id: int) -> bytes | None:
        piece = self.piece(token_id)
        if piece is None:
            return None
        if token_id in self.added_ids:
            return piece.encode("utf-8")
        if match := BYTE_TOKEN.fullmatch(piece):
            return bytes([int(match.group(1), 16)])
        if self.byte_level and all(c in BYTE_LEVEL_CHARS for c in piece):
            return bytes(BYTE_LEVEL_CHARS[c] for c in piece)
        if self.continuing_prefix and piece.startswith(self.continuing_prefix):
            piece = piece[len(self.continuing_prefix):]
        return piece.replace("\u2581", " ").encode("utf-8")

    def covered(self, ids: list[int], start: int, end: int) -> str:
        """The characters ``ids[start:end]`` stand for, widened to whole characters where a token
        holds part of one (byte-level tokens of a multi-byte character)."""
        data = b"".join(self.token_bytes(i) or b"" for i in ids)
        first = len(b"".join(self.token_bytes(i) or b"" for i in ids[:start]))
        last = len(b"".join(self.token_bytes(i) or b"" for i in ids[:end]))
        while 0 < first < len(data) and data[first] & 0xC0 == 0x80:
            first -= 1
        while last < len(data) and data[last] & 0xC0 == 0x80:
            last += 1
        return data[first:last].decode("utf-8", "replace")

    def text(self, ids: list[int], mark_added: bool = False) -> str:
        """What the ids stand for, bytes joined then read as UTF-8; with ``mark_added`` each added
        token is one ADDED_TOKEN character."""
        parts, run = [], b""
        for token_id in ids:
            if mark_added and token_id in self.added_ids:
                parts += [run.decode("utf-8", "replace"), ADDED_TOKEN]
                run = b""
            else:
                run += self.token_bytes(token_id) or b""
        return "".join(parts) + run.decode("utf-8", "replace")


def _added_token_shape(expected: list[int], actual: list[int], first: int, vocabulary: Vocabulary) -> str | None:
    """Where one side has an added token the other lacks: read as plain text by the other side
    (its text holds the token's content, whatever case a normalizer gave it, or more unknown tokens,
    where the model knows no piece of it), or dropped or added."""
    def added(ids: list[int]) -> list[int]:
        return [i for i in ids if i in vocabulary.added_ids]

    # An unknown token impl gives is told by its own shape; one it lacks may be a "[UNK]" it spelled out.
    mine, theirs = added(expected), [i for i in added(actual) if i != vocabulary.unk_id]
    mine = mine if vocabulary.unk_id not in actual else [i for i in mine if i != vocabulary.unk_id]
    if mine == theirs:
        return None
    where = "at the start" if first == 0 else "at the end" if first >= min(len(expected), len(actual)) else "in the middle"
    if len(mine) > len(theirs):
        missing = next(i for i in mine if mine.count(i) > theirs.count(i))
        spelled = vocabulary.piece(missing).casefold() in vocabulary.text(actual).casefold() or \
            vocabulary.unk_id is not None and actual.count(vocabulary.unk_id) > expected.count(vocabulary.unk_id)
        return "does not split off an added token" if spelled else f"drops an added token {where}"
    if len(theirs) > len(mine):
        extra = next(i for i in theirs if theirs.count(i) > mine.count(i))
        read = vocabulary.piece(extra).casefold() in vocabulary.text(expected).casefold()
        return "splits off an added token the oracle reads as text" if read else f"adds an added token {where}"
    return f"gives other added tokens {where}"


def ids_shape(expected: list[int], actual: list[int], vocabulary: Vocabulary) -> str:
    """The shape of the first difference between two lists of ids:
    ``ids_shape(encode(" a"), encode("a"), gpt2) == "drops ' ' at the start"``."""
    if any(vocabulary.piece(token_id) is None for token_id in actual):
        return "gives ids outside the vocabulary"
    # A list cut short (or run on) is one shape whatever its last tokens hold: truncation bugs live there.
    if actual == expected[:len(actual)]:
        return "drops tokens at the end"
    if expected == actual[:len(expected)]:
        return "adds tokens at the end"
    a0, a1, b0, b1 = first_change(expected, actual)
    if added := _added_token_shape(expected, actual, a0, vocabulary):
        return added
    unk = vocabulary.unk_id
    if unk is not None and (unk in actual[b0:b1]) != (unk in expected[a0:a1]):
        return ("gives the unknown token where the oracle does not" if unk in actual[b0:b1]
                else "does not give the unknown token where the oracle does")
    if vocabulary.text(expected) == vocabulary.text(actual):
        return f"splits {describe(vocabulary.covered(expected, a0, a1))} differently"
    return text_shape(vocabulary.text(expected, mark_added=True), vocabulary.text(actual, mark_added=True))
