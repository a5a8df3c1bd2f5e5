"""Models: turn one pre-tokenized piece into token ids (HF ``tokenizers/src/models``).

BPE, WordPiece and WordLevel here; Unigram in impl.unigram. ``model_from_json`` picks one by
"type", or, for older files without one, by shape as the oracle does.
"""
from __future__ import annotations

import heapq
import math
import struct

from .errors import UNTYPED, TokenizerFileError, UnsupportedError, build_component, child, field, optional
from .byte_level import byte_token_ids
from .unigram import Unigram

# A merge rule: (left id, right id) -> (rank, id of the merged token). Lower rank merges first.
MergeRules = dict[tuple[int, int], tuple[int, int]]

MAX_ID = 2**32 - 1  # ids are u32 in HF tokenizers
CACHE_CAPACITY = 10_000  # as HF's DEFAULT_CACHE_CAPACITY
CACHE_MAX_PIECE_LENGTH = 256  # longer pieces are rare and would bloat the cache


class VocabModel:
    """A model whose vocabulary is a token -> id map, with an optional unknown token."""

    vocab: dict[str, int]
    unk_token: str | None
    where: str

    def _index_vocab(self) -> None:
        self._tokens_by_id = {token_id: token for token, token_id in self.vocab.items()}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._tokens_by_id.get(token_id)

    def _unk_id(self) -> int:
        # HF checks the unk token only when a piece needs it, so a file with a bad unk_token
        # still encodes text whose pieces are all in the vocab.
        unk_id = self.vocab.get(self.unk_token)
        if unk_id is None:
            raise TokenizerFileError(child(self.where, "unk_token"),
                                     f"unk token {self.unk_token!r} is not in the vocab")
        return unk_id


class BPE(VocabModel):
    """Byte-pair encoding: split a piece into characters, then apply merges lowest rank first."""

    def __init__(self, vocab: dict[str, int], merges: MergeRules, *, unk_token: str | None = None,
                 continuing_subword_prefix: str | None = None, end_of_word_suffix: str | None = None,
                 fuse_unk: bool = False, byte_fallback: bool = False, ignore_merges: bool = False,
                 merges_dropped: bool = False, where: str = "BPE"):
        self.vocab = vocab
        self.merges = merges
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        # dropout 1.0 drops every merge; HF then also skips ignore_merges and the cache.
        self.merges_dropped = merges_dropped
        self.where = where
        self._index_vocab()
        self._cache: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_json(cls, node: dict, where: str) -> BPE:
        vocab = _vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab"))
        prefix = optional(node, "continuing_subword_prefix", where, None, str)
        merge_pairs = _merge_pairs_from_json(field(node, "merges", where, list), child(where, "merges"))
        return cls(
            vocab,
            _merge_rules(merge_pairs, vocab, prefix, child(where, "merges")),
            unk_token=optional(node, "unk_token", where, None, str),
            continuing_subword_prefix=prefix,
            end_of_word_suffix=optional(node, "end_of_word_suffix", where, None, str),
            fuse_unk=optional(node, "fuse_unk", where, False, bool),
            byte_fallback=optional(node, "byte_fallback", where, False, bool),
            ignore_merges=optional(node, "ignore_merges", where, False, bool),
            merges_dropped=_merges_dropped(node, where),
            where=where,
        )

    def tokenize(self, piece: str) -> list[int]:
        """The ids of one pre-tokenized piece."""
        if not piece:
            return []
        if self.merges_dropped:
            return self._symbols(piece)
        if self.ignore_merges and piece in self.vocab:
            return [self.vocab[piece]]
        cached = self._cache.get(piece)
        if cached is None:
            cached = tuple(self._merge(self._symbols(piece)))
            if len(piece) < CACHE_MAX_PIECE_LENGTH and len(self._cache) < CACHE_CAPACITY:
                self._cache[piece] = cached
        return list(cached)

    def _symbols(self, piece: str) -> list[int]:
        """One id per character (or per byte, or one unk per unknown run) before any merge."""
        ids: list[int] = []
        pending_unk = False  # an unknown character whose unk id is not emitted yet, so fuse_unk can fuse
        last = len(piece) - 1
        for position, char in enumerate(piece):
            token = char
            if position > 0 and self.continuing_subword_prefix is not None:
                token = self.continuing_subword_prefix + token
            if position == last and self.end_of_word_suffix is not None:
                token += self.end_of_word_suffix
            token_id = self.vocab.get(token)
            if token_id is not None:
                if pending_unk:
                    ids.append(self._unk_id())
                    pending_unk = False
                ids.append(token_id)
                continue
            byte_ids = byte_token_ids(self.vocab, token) if self.byte_fallback else None
            if byte_ids is not None:
                # As in HF, a pending unk is not flushed here: it lands after these bytes.
                ids.extend(byte_ids)
                continue
            if self.unk_token is not None:
                if pending_unk and not self.fuse_unk:
                    ids.append(self._unk_id())
                pending_unk = True
            # Without an unk token, an unknown character is dropped.
        if pending_unk:
            ids.append(self._unk_id())
        return ids

    def _merge(self, ids: list[int]) -> list[int]:
        """Apply merges to ``ids``, always the lowest-ranked adjacent pair first, leftmost on ties.

        Symbols form a linked list over positions in ``ids``; a heap holds candidate merges as
        (rank, left position). A merge changes its neighbours' pairs, so popped candidates whose
        pair has changed since they were queued are skipped rather than removed from the heap.
        Heap entries pack (rank, position) into one int, ``rank << 32 | position``: it orders the
        same as the tuple and makes heap operations several times faster on long pieces.
        """
        if len(ids) < 2:
            return ids
        merges = self.merges
        following = list(range(1, len(ids) + 1))
        following[-1] = -1
        preceding = list(range(-1, len(ids) - 1))
        alive = [True] * len(ids)

        queue: list[int] = []

        def enqueue(left: int) -> None:
            if left != -1 and following[left] != -1:
                rule = merges.get((ids[left], ids[following[left]]))
                if rule is not None:
                    heapq.heappush(queue, rule[0] << 32 | left)

        for left in range(len(ids) - 1):
            enqueue(left)
        while queue:
            rank, left = divmod(heapq.heappop(queue), 1 << 32)
            right = following[left]
            if not alive[left] or right == -1:
                continue
            rule = merges.get((ids[left], ids[right]))
            if rule is None or rule[0] != rank:  # a pair's rank is unique, so this spots stale entries
                continue
            ids[left] = rule[1]
            alive[right] = False
            following[left] = following[right]
            if following[right] != -1:
                preceding[following[right]] = left
            enqueue(preceding[left])
            enqueue(left)
        return [token_id for token_id, kept in zip(ids, alive) if kept]


class WordPiece(VocabModel):
    """BERT's greedy longest match: the longest vocabulary token at the start of the piece, then
    the longest ``##``-prefixed one at each later position. A piece with a position no token
    matches, or longer than ``max_input_chars_per_word`` characters, is one unknown token.

    Example: vocab ``un``, ``##aff``, ``##able`` cuts ``"unaffable"`` into those three.
    """

    def __init__(self, vocab: dict[str, int], unk_token: str, continuing_subword_prefix: str,
                 max_input_chars_per_word: int, where: str = "WordPiece"):
        self.vocab = vocab
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        self.where = where
        self._index_vocab()

    @classmethod
    def from_json(cls, node: dict, where: str) -> WordPiece:
        max_chars = field(node, "max_input_chars_per_word", where, int)
        if not 0 <= max_chars < 2**64:
            raise TokenizerFileError(child(where, "max_input_chars_per_word"),
                                     f"expected a non-negative integer, found {max_chars}")
        return cls(_vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab")),
                   field(node, "unk_token", where, str), field(node, "continuing_subword_prefix", where, str),
                   max_chars, where)

    def tokenize(self, piece: str) -> list[int]:
        if len(piece) > self.max_input_chars_per_word:
            return [self._unk_id()]
        ids: list[int] = []
        start = 0
        while start < len(piece):
            for end in range(len(piece), start, -1):
                token = piece[start:end] if start == 0 else self.continuing_subword_prefix + piece[start:end]
                token_id = self.vocab.get(token)
                if token_id is not None:
                    ids.append(token_id)
                    start = end
                    break
            else:
                return [self._unk_id()]
        return ids


class WordLevel(VocabModel):
    """The whole piece is one token, or the unknown token."""

    def __init__(self, vocab: dict[str, int], unk_token: str, where: str = "WordLevel"):
        self.vocab = vocab
        self.unk_token = unk_token
        self.where = where
        self._index_vocab()

    @classmethod
    def from_json(cls, node: dict, where: str) -> WordLevel:
        return cls(_vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab")),
                   field(node, "unk_token", where, str), where)

    def tokenize(self, piece: str) -> list[int]:
        token_id = self.vocab.get(piece)
        return [token_id if token_id is not None else self._unk_id()]


Model = BPE | WordPiece | WordLevel | Unigram
MODELS: dict[str, type[Model]] = {"BPE": BPE, "WordPiece": WordPiece, "WordLevel": WordLevel, "Unigram": Unigram}
# Files from before models had a "type": the oracle tries each shape in this order (a WordLevel
# node is also a WordPiece one without two fields, so WordPiece goes first).
UNTYPED_MODELS = tuple((name, model, UNTYPED) for name, model in MODELS.items())


def model_from_json(node: dict, where: str) -> Model:
    return build_component(node, where, "model", MODELS, UNTYPED_MODELS)


def _vocab_from_json(vocab: dict, where: str) -> dict[str, int]:
    # HF accepts two tokens with one id and then decodes that id arbitrarily; impl refuses.
    token_by_id: dict[int, str] = {}
    for token, token_id in vocab.items():
        if not isinstance(token_id, int) or isinstance(token_id, bool) or not 0 <= token_id <= MAX_ID:
            raise TokenizerFileError(child(where, token), f"expected an id in 0..{MAX_ID}, found {token_id!r}")
        if token_id in token_by_id:
            raise UnsupportedError(child(where, token),
                                   f"id {token_id} is already the id of {token_by_id[token_id]!r}")
        token_by_id[token_id] = token
    return vocab


def _merge_pairs_from_json(entries: list, where: str) -> list[tuple[int, str, str]]:
    """(JSON index, left, right) per merge; entries are all ``"a b"`` strings or all ``["a", "b"]``."""
    legacy = bool(entries) and isinstance(entries[0], str)
    pairs = []
    for index, entry in enumerate(entries):
        if legacy:
            if not isinstance(entry, str):
                raise TokenizerFileError(child(where, index), 'expected a "left right" string like merges[0]')
            if entry.startswith("#version"):  # HF skips merges.txt's header line here too
                continue
            parts = entry.split(" ")
            if len(parts) != 2:
                raise TokenizerFileError(child(where, index),
                                         f'expected "left right" (one space), found {entry!r}')
        else:
            parts = entry
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(p, str) for p in entry)):
                raise TokenizerFileError(child(where, index), f'expected ["left", "right"], found {entry!r}')
        pairs.append((index, *parts))
    return pairs


def _merge_rules(pairs: list[tuple[int, str, str]], vocab: dict[str, int], prefix: str | None,
                 where: str) -> MergeRules:
    """Merge rules by id, ranked by position; a repeated pair keeps its last rank, as in HF."""
    rules: MergeRules = {}
    for index, left, right in pairs:
        for token in (left, right):
            if token not in vocab:
                raise TokenizerFileError(child(where, index), f"merge token {token!r} is not in the vocab")
        merged = _merged_token(left, right, prefix)
        if merged is None:
            raise TokenizerFileError(child(where, index), f"cutting the continuing_subword_prefix {prefix!r} "
                                                          f"off {right!r} does not leave whole characters")
        if merged not in vocab:
            raise TokenizerFileError(child(where, index), f"merged token {merged!r} is not in the vocab")
        rules[vocab[left], vocab[right]] = (index, vocab[merged])
    return rules


def _merged_token(left: str, right: str, prefix: str | None) -> str | None:
    """The token a merge makes: ``left`` then ``right`` less the prefix's length in bytes.

    HF cuts those bytes whether or not ``right`` starts with the prefix. None where that leaves
    no valid string (HF then errors, panics or aborts).
    """
    if not prefix:
        return left + right
    right_bytes = right.encode()
    cut = len(prefix.encode())
    try:
        return left + right_bytes[cut:].decode() if len(right_bytes) >= cut else None
    except UnicodeDecodeError:
        return None


def _merges_dropped(node: dict, where: str) -> bool:
    """Whether dropout drops every merge (1.0); 0 or null keep them all, anything between is random."""
    dropout = optional(node, "dropout", where, 0.0, (int, float))
    if isinstance(dropout, bool):
        raise TokenizerFileError(child(where, "dropout"), "expected a number, found bool")
    dropout = _as_f32(dropout)  # HF reads dropout as an f32: 1e-50 is 0 and 1.00000001 is 1
    if not 0.0 <= dropout <= 1.0:
        raise TokenizerFileError(child(where, "dropout"), f"dropout must be between 0 and 1, found {dropout}")
    if 0.0 < dropout < 1.0:
        raise UnsupportedError(child(where, "dropout"),
                               f"dropout {dropout} makes encoding random; impl supports only 0 and 1")
    return dropout == 1.0


def _as_f32(value: float) -> float:
    """``value`` rounded to the nearest f32."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
