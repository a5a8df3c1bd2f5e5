"""A token-level mask that keeps generated text on a regex.

Tokens are laid out once per tokenizer (``TokenTable``): sorted longest first, with one byte column
per position, so that "the tokens whose byte k lies in this set" is one ``bytes.translate`` and one
``int(..., 2)``: a bitmask over token indices, computed in C. The tokens allowed in a DFA state are
found by running the DFA over all tokens at once, position by position, keeping one bitmask per DFA
state reached: a token is allowed when its last byte leaves the DFA in a live state. Since tokens are
sorted longest first, the masks of deep positions are short integers. Masks are memoized per DFA
state, which decoding runs revisit, and column masks per vocabulary, which every schema shares.
``allowed_tokens`` returns a ``TokenSet``: a read-only set over the mask, listing its ids only
when iterated.

Example (a vocabulary of b"{", b"}", b"{}", b"a"; pattern ``\\{\\}``): ``start()`` allows the ids
of b"{" and b"{}"; after b"{", only b"}"; after b"{}", nothing, and ``is_complete`` is True.

Supported vocabularies: those whose decoded text is the concatenation of ``vocab_bytes()`` after
the first token: byte-level BPE (GPT-2, Llama 3, Qwen), byte-fallback and Metaspace
SentencePiece, WordPiece without cleanup. A decoder that rewrites text between tokens (BPEDecoder's
``</w>`` suffix becomes a space only before another token) makes a mask over ``vocab_bytes()``
disagree with what is decoded: ``Constraint`` refuses it with ValueError, found by decoding a fixed
sample of token triples. A vocabulary that cannot spell the start of the pattern (WordPiece or
WordLevel words that all carry a space) is refused too. A vocabulary lacking a character the
pattern needs later can still leave a state with no allowed token that is not complete.

Special tokens are never text, with one exception: a special token whose content is the start of
the text every match begins with (Mistral's ``[TOOL_CALLS]`` for the mistral format) is allowed at
the start, where it stands for that text, as a model writes it.
"""
from __future__ import annotations

import weakref
from collections.abc import Set
from itertools import compress
from operator import itemgetter

from .automaton import DEAD, ByteDFA

_BITS_TO_FLAGS = bytes.maketrans(b"01", b"\x00\x01")


class TokenTable:
    """A vocabulary's text tokens (special tokens and ids without bytes left out), longest first.

    ``ids[i]`` is the token id at index i, ``index_of[id]`` its index, ``data[i]`` its bytes;
    ``longer_than[k]`` counts the tokens longer than k bytes (they are indices 0..longer_than[k]-1),
    and ``columns[k]`` holds byte k of each of them, last index first (so that the text of a
    translated column reads as a binary number whose bit i is index i, without a reversed copy).
    """

    _cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    # Token triples decoded to find a decoder that rewrites text between tokens.
    PROBES = 64

    def __init__(self, vocab_bytes: list[bytes], special_ids: set[int], decode=None):
        entries = sorted(((data, token_id) for token_id, data in enumerate(vocab_bytes)
                          if data and token_id not in special_ids), key=lambda entry: -len(entry[0]))
        self.data = [data for data, _ in entries]
        self.ids = [token_id for _, token_id in entries]
        self.index_of = {token_id: index for index, token_id in enumerate(self.ids)}
        longest = len(self.data[0]) if self.data else 0
        lengths = [len(data) for data in self.data]
        self.longer_than = [0] * (longest + 1)
        count = 0
        for k in range(longest, -1, -1):
            while count < len(lengths) and lengths[count] > k:
                count += 1
            self.longer_than[k] = count
        self.columns = [bytes(map(itemgetter(k), reversed(self.data[:self.longer_than[k]]))) for k in range(longest)]
        self.rewritten = self._rewritten(decode) if decode is not None else None
        self._column_masks: dict[tuple[int, bytes], int] = {}

    def _rewritten(self, decode) -> str | None:
        """None when decoding tokens after a first one adds exactly their bytes, on a fixed sample
        of whole-character tokens; else the first triple where it does not (ids and both texts)."""
        whole = [token_id for token_id, data in zip(self.ids, self.data) if _is_text(data)]
        sample = whole[::max(1, len(whole) // self.PROBES)]
        for first, second, third in zip(sample, sample[1:], sample[2:]):
            decoded = decode([first, second, third])
            expected = decode([first]) + (self.data[self.index_of[second]] + self.data[self.index_of[third]]).decode()
            if decoded != expected:
                return f"ids {[first, second, third]} decode to {decoded!r}, not {expected!r}"
        return None

    @classmethod
    def of(cls, tokenizer) -> "TokenTable":
        """The table of ``tokenizer``, built once per tokenizer object."""
        try:
            return cls._cache[tokenizer]
        except (KeyError, TypeError):
            pass
        table = cls(tokenizer.vocab_bytes(), special_token_ids(tokenizer), getattr(tokenizer, "decode", None))
        try:
            cls._cache[tokenizer] = table
        except TypeError:  # not weak-referenceable: no cache
            pass
        return table

    def ids_of(self, mask: int) -> frozenset[int]:
        """The token ids whose index bits are set in ``mask``."""
        flags = bin(mask)[:1:-1].encode("ascii").translate(_BITS_TO_FLAGS)
        return frozenset(compress(self.ids, flags))

    def column_mask(self, depth: int, translation: bytes) -> int:
        """Bitmask of the tokens longer than ``depth`` whose byte ``depth`` ``translation`` maps to "1".

        Kept per table: every Constraint over this vocabulary asks for the same few byte sets (any
        string character, digits...), so a new schema's masks start warm."""
        key = (depth, translation)
        mask = self._column_masks.get(key)
        if mask is None:
            mask = self._column_masks[key] = int(self.columns[depth].translate(translation) or b"0", 2)
        return mask


class TokenSet(Set):
    """The ids allowed in one state: a read-only set over a bitmask of TokenTable indices.

    Membership is a bit test and ``len`` a bit count; the ids are listed (once) only when iterated,
    so a sampler that tests or counts never pays for a 150k-element set. ``TokenSet(table, 0b101)``
    holds ``table.ids[0]`` and ``table.ids[2]``; set operations return frozensets."""

    __slots__ = ("_table", "_mask", "_extra", "_listed")

    def __init__(self, table: TokenTable, mask: int, extra: frozenset[int] = frozenset()):
        self._table, self._mask, self._extra, self._listed = table, mask, extra, None

    def __contains__(self, token_id) -> bool:
        index = self._table.index_of.get(token_id) if isinstance(token_id, int) else None
        return (index is not None and (self._mask >> index) & 1 == 1) or token_id in self._extra

    def __len__(self) -> int:
        return self._mask.bit_count() + len(self._extra)

    def __iter__(self):
        if self._listed is None:
            self._listed = self._table.ids_of(self._mask) | self._extra
        return iter(self._listed)

    def __repr__(self) -> str:
        return f"TokenSet({len(self)} ids)"

    @classmethod
    def _from_iterable(cls, ids) -> frozenset[int]:
        return frozenset(ids)

    __hash__ = Set._hash


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def special_token_ids(tokenizer) -> set[int]:
    """Ids that are never text: added tokens marked special, and the end-of-sequence token."""
    added = getattr(tokenizer, "added", None)
    ids = {token_id for token_id, token in getattr(added, "by_id", {}).items() if getattr(token, "special", False)}
    eos = getattr(tokenizer, "eos_token_id", None)
    return ids | ({eos} if isinstance(eos, int) else set())


class Constraint:
    """Masks tokens so that the generated text stays a prefix of a full match of ``pattern``.

    States are ints (hashable, shareable across sequences): ``start()``, ``advance(state, id)``,
    ``allowed_tokens(state)`` (a read-only set of ids, ``TokenSet``), ``is_complete(state)`` (the text so far fully
    matches, so end-of-sequence may be sampled). Special tokens are never allowed, but for a special
    token spelling the start of every match, at the start (see the module notes). Raises ValueError
    for a pattern it cannot compile and for a vocabulary it does not support. A state from which no
    token continues yet not complete can only arise when the vocabulary cannot spell the text the
    pattern requires.

    >>> from textbound.impl import Tokenizer
    >>> tokenizer = Tokenizer({"version": "1.0", "decoder": {"type": "Fuse"}, "model": {
    ...     "type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3}, "merges": ["a b"]}})
    >>> constraint = Constraint("ab|c", tokenizer)
    >>> state = constraint.start()
    >>> sorted(constraint.allowed_tokens(state)), constraint.is_complete(constraint.advance(state, 2))
    ([0, 2, 3], True)
    """

    def __init__(self, pattern: str, tokenizer):
        self.pattern = pattern
        self.dfa = ByteDFA.from_pattern(pattern)
        self.table = TokenTable.of(tokenizer)
        if self.table.rewritten is not None:
            raise ValueError(f"the tokenizer's decoder rewrites text between tokens ({self.table.rewritten}): a mask "
                             f"over vocab_bytes() would not follow the decoded text; this vocabulary is not supported")
        self._special_texts = self._special_prefixes(tokenizer)
        self._masks: dict[object, int] = {}
        self._allowed: dict[object, TokenSet] = {}
        self._targets: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        self._translations: dict[tuple[int, ...], bytes] = {}
        self._next: dict[tuple[int, int], int] = {}
        unspelled = self._unspelled_start()
        if unspelled is not None:
            raise ValueError(f"no token of the vocabulary can spell {unspelled.decode('utf-8', 'replace')!r}, which "
                             f"every match of the pattern "
                             f"{pattern[:80]!r} begins with: this vocabulary is not supported")

    def _special_prefixes(self, tokenizer) -> dict[int, bytes]:
        """Special tokens (EOS aside) whose content begins the text every match starts with, and that
        content: ``[TOOL_CALLS]`` for a pattern ``\\[TOOL_CALLS\\]\\[...``."""
        forced = self._forced_prefix()
        eos = getattr(tokenizer, "eos_token_id", None)
        vocab = tokenizer.vocab_bytes()
        return {token_id: vocab[token_id] for token_id in sorted(special_token_ids(tokenizer))
                if token_id != eos and token_id < len(vocab) and vocab[token_id] and forced.startswith(vocab[token_id])}

    def _unspelled_start(self) -> bytes | None:
        """None when tokens can spell the text every match begins with; else the part they cannot reach
        (b"\\n{..." for hermes on a vocabulary without a newline).

        Positions in that text are reached token by token from 0; a token from position i is allowed
        only if it spells the text there, or runs past its end (where the pattern branches)."""
        forced = self._forced_prefix()
        if not forced:
            return None if self.dfa.is_accepting(0) or self.allowed_tokens(0) else b""
        reached, state = {0}, 0
        for position in range(len(forced)):
            if position in reached:
                for token_id in self.allowed_tokens(state):
                    index = self.table.index_of.get(token_id)
                    length = len(self.table.data[index] if index is not None else self._special_texts[token_id])
                    if position + length >= len(forced):
                        return None
                    reached.add(position + length)
            state = self.dfa.step(state, forced[position])
        return forced[max(reached):]

    def _forced_prefix(self) -> bytes:
        """The bytes every match begins with (where the automaton has one way on, and no match ends)."""
        state, forced = 0, b""
        while not self.dfa.is_accepting(state) and len(forced) < 256:
            targets = self.dfa.targets(state)
            if len(targets) != 1:
                break
            (target, classes), = targets.items()
            if len(classes) != 1 or len(self.dfa.class_bytes[classes[0]]) != 1:
                break
            state, forced = target, forced + bytes(self.dfa.class_bytes[classes[0]])
        return forced

    def start(self) -> int:
        return 0

    def is_complete(self, state: int) -> bool:
        return self.dfa.is_accepting(self._check_state(state))

    def allowed_tokens(self, state: int) -> TokenSet:
        key = self._key(state)
        allowed = self._allowed.get(key)
        if allowed is None:
            allowed = self._allowed[key] = TokenSet(self.table, self.allowed_mask(state),
                                                    frozenset(self._special_texts) if state == 0 else frozenset())
        return allowed

    def advance(self, state: int, token_id: int) -> int:
        key = (self._check_state(state), token_id)
        following = self._next.get(key)
        if following is None and state == 0 and token_id in self._special_texts:
            following = self._next[key] = self.dfa.walk(0, self._special_texts[token_id])
        if following is None:
            index = self.table.index_of.get(token_id) if isinstance(token_id, int) else None
            if index is None or not (self.allowed_mask(state) >> index) & 1:
                raise ValueError(f"token {token_id!r} is not allowed in state {state} of pattern {self.pattern!r}")
            following = self._next[key] = self.dfa.walk(state, self.table.data[index])
        return following

    def _check_state(self, state) -> int:
        if not isinstance(state, int) or not 0 <= state < self.dfa.state_count:
            raise ValueError(f"{state!r} is not a state of this constraint")
        return state

    def _key(self, state) -> object:
        # States of a long bounded repeat that differ only in far-away counts share one mask.
        return self.dfa.signature(self._check_state(state), len(self.table.columns))

    def allowed_mask(self, state: int) -> int:
        """Bitmask over token indices (``TokenTable.ids``) of the tokens allowed in ``state``."""
        key = self._key(state)
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = self._compute_mask(state)
        return mask

    def _compute_mask(self, state: int) -> int:
        longer_than = self.table.longer_than
        frontier = {state: (1 << longer_than[0]) - 1}
        allowed = 0
        for depth in range(len(self.table.columns)):
            reached: dict[int, int] = {}
            for current, tokens in frontier.items():
                if tokens.bit_count() <= self.SPARSE:
                    allowed |= self._walk_each(current, tokens, depth)
                    continue
                for target, classes in self._targets_of(current):
                    moved = tokens & self._class_mask(depth, classes)
                    if moved:
                        reached[target] = reached.get(target, 0) | moved
            # Tokens of length depth+1 end here, alive: allowed. Longer ones go on.
            still = longer_than[depth + 1]
            frontier = {}
            for target, tokens in reached.items():
                allowed |= tokens >> still << still
                tokens &= (1 << still) - 1
                if tokens:
                    frontier[target] = tokens
            if not frontier:
                break
        return allowed

    # Below this many tokens, walking each one's remaining bytes beats building full-width masks.
    SPARSE = 48

    def _walk_each(self, state: int, tokens: int, depth: int) -> int:
        """The tokens of ``tokens`` whose bytes from ``depth`` on keep ``state`` live, one by one."""
        allowed, data, walk = 0, self.table.data, self.dfa.walk
        while tokens:
            lowest = tokens & -tokens
            tokens ^= lowest
            if walk(state, data[lowest.bit_length() - 1][depth:]) != DEAD:
                allowed |= lowest
        return allowed

    def _targets_of(self, state: int) -> list[tuple[int, tuple[int, ...]]]:
        targets = self._targets.get(state)
        if targets is None:
            targets = self._targets[state] = list(self.dfa.targets(state).items())
        return targets

    def _class_mask(self, depth: int, classes: tuple[int, ...]) -> int:
        """Bitmask of the tokens longer than ``depth`` whose byte ``depth`` lies in ``classes``."""
        translation = self._translations.get(classes)
        if translation is None:
            chosen = {byte for c in classes for byte in self.dfa.class_bytes[c]}
            translation = self._translations[classes] = bytes(0x31 if byte in chosen else 0x30 for byte in range(256))
        return self.table.column_mask(depth, translation)
