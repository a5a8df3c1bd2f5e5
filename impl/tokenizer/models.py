"""Models: turn one pre-tokenized piece into token ids (HF ``tokenizers/src/models``).

BPE, WordPiece and WordLevel here; Unigram in impl.tokenizer.unigram. ``model_from_json`` picks one by
"type", or, for older files without one, by shape as the oracle does.
"""
from __future__ import annotations

import functools
import gc
import heapq
import math
import operator
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate, chain, repeat

import regex

from ..errors import TokenizerFileError, UnsupportedError
from .byte_level import byte_token_ids
from .fields import U32_MAX, UNTYPED, build_component, child, field, optional, u32_value, usize_field
from .joined import joined, pieces_of
from .piece_cache import remember, remember_all
from .unigram import Unigram

# Merge rules, packed into ints for speed and memory: ``left << 32 | right`` (a pair of ids) ->
# ``rank << 32 | merged`` (the rule's rank, lower merging first, and the id it makes). Ids are
# u32, so both halves fit; a packed rule orders by rank, as the merge queue needs.
MergeRules = dict[int, int]
ID_BITS = 32
ID_MASK = (1 << ID_BITS) - 1
RANK_MASK = ~ID_MASK
NO_RULE = 1 << 64  # above every packed rule

# Up to this many symbols, merging rescans the pairs after each merge (min() and index() in C);
# longer pieces use the queue, whose cost grows as n log n rather than n squared.
SCAN_MAX_SYMBOLS = 48
# The most pairs of characters whose rules _character_rules keeps (all 65,536 of a byte-level alphabet).
PAIR_TABLE_CAPACITY = 1 << 16
# The most characters whose affixed token ids an AffixedIds table keeps.
CHARACTER_TABLE_CAPACITY = 1 << 16
# A piece longer than this is cut where no merge can cross (BPE.chunks) and each part merged alone.
CHUNKED_PIECE_LENGTH = 64
# Characters that start words in the pieces of pipelines without a pre-tokenizer: SentencePiece's
# meta space, a space, and the byte-level alphabet's space.
CHUNK_SEPARATORS = ("\u2581", " ", "\u0120")


def pair_key(left: int, right: int) -> int:
    """The MergeRules key of the pair (left, right)."""
    return left << ID_BITS | right


def pair_keys(ids: list[int]) -> Iterator[int]:
    """The MergeRules key of each adjacent pair of ``ids``, computed in C: [1, 2, 3] -> keys of (1, 2), (2, 3)."""
    return map(operator.or_, map(operator.lshift, ids, repeat(ID_BITS)), ids[1:])


class AffixedIds(dict):
    """Character -> the id of ``prefix + character + suffix`` in the vocab (None where it is no
    token), filled on first sight; up to CHARACTER_TABLE_CAPACITY characters are kept.
    ``AffixedIds({"##a": 5}, "##", "")["a"] == 5``."""

    def __init__(self, vocab: dict[str, int], prefix: str, suffix: str):
        super().__init__()
        self.vocab, self.prefix, self.suffix = vocab, prefix, suffix

    def __missing__(self, char: str) -> int | None:
        found = self.vocab.get(self.prefix + char + self.suffix)
        if len(self) < CHARACTER_TABLE_CAPACITY:
            self[char] = found
        return found


class VocabModel:
    """A model whose vocabulary is a token -> id map, with an optional unknown token."""

    vocab: dict[str, int]
    unk_token: str | None
    where: str
    _tokens_by_id: dict[int, str] | None = None

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        if self._tokens_by_id is None:  # built on first use: encoding never needs it
            self._tokens_by_id = dict(zip(self.vocab.values(), self.vocab.keys()))
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
    """Byte-pair encoding: split a piece into characters, then apply merges lowest rank first.

    ``merges`` packs each rule as MergeRules says: the vocab a=0, b=1, ab=2 with the one merge
    "a b" has ``{pair_key(0, 1): 0 << 32 | 2}``, and ``tokenize("ab")`` is ``[2]``.
    """

    def __init__(self, vocab: dict[str, int], merges: MergeRules | Callable[[], MergeRules], *,
                 unk_token: str | None = None, continuing_subword_prefix: str | None = None,
                 end_of_word_suffix: str | None = None, fuse_unk: bool = False, byte_fallback: bool = False,
                 ignore_merges: bool = False, merges_dropped: bool = False, where: str = "BPE"):
        self.vocab = vocab
        self._merges = merges  # or what builds them on first use (a checked file loads faster)
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        # dropout 1.0 drops every merge; HF then also skips ignore_merges and the cache.
        self.merges_dropped = merges_dropped
        self.where = where
        self._cache: dict[str, list[int]] = {}  # never handed out: callers get copies
        self._chunk_pattern: regex.Pattern[str] | None | bool = False  # False: not worked out yet
        self._cut_pattern: regex.Pattern[str] | None | bool = False  # the same
        self._pair_rules: dict[tuple[str, str], int] = {}  # see _character_rules
        self._affixed_tables: dict[tuple[str, str], AffixedIds] = {}  # see _affixed_symbols
        self._characters: frozenset[str] | None = None  # see characters

    @property
    def merges(self) -> MergeRules:
        if not isinstance(self._merges, dict):
            self._merges = self._merges()
        return self._merges

    @classmethod
    def from_json(cls, node: dict, where: str) -> BPE:
        vocab = _vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab"))
        prefix = optional(node, "continuing_subword_prefix", where, None, str)
        merges = _merge_rules_from_json(field(node, "merges", where, list), vocab, prefix, child(where, "merges"))
        return cls(
            vocab,
            merges,
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
        if len(piece) > CHUNKED_PIECE_LENGTH:
            return list(chain.from_iterable(self._merged_each(self.chunks(piece))))
        return list(self._merged(piece))

    def tokenize_all(self, pieces: list[str]) -> list[int]:
        """The ids of ``pieces`` one after another, ``tokenize`` of each: the short ones the cache
        lacks merged together. ``["ab", "c"]`` with the one merge "a b" -> ``[ab, c]``."""
        if self.merges_dropped or self.ignore_merges or max(map(len, pieces), default=0) > CHUNKED_PIECE_LENGTH:
            return list(chain.from_iterable(map(self.tokenize, pieces)))
        return list(chain.from_iterable(self._merged_each(pieces)))

    def tokenize_batch(self, pieces: list[str]) -> list[list[int]]:
        """``[self.tokenize(piece) for piece in pieces]``, faster for many short pieces (see
        tokenize_joined): ``["ab", "c"]`` with the one merge "a b" -> ``[[ab], [c]]``."""
        return self.tokenize_joined(*joined(pieces))

    def tokenize_joined(self, text: str, ends: list[int]) -> list[list[int]]:
        """``tokenize`` of each piece that ``text`` holds one after another, the piece ending at
        each of ``ends``: ``("abc", [2, 3])`` -> the ids of ``"ab"`` and of ``"c"``. The symbols of
        all pieces, and the rules of all adjacent symbols, are looked up in one go (in C), and the
        pieces merged in one loop (no cache: the caller keeps the results)."""
        if self.merges_dropped:
            return [self.tokenize(piece) for piece in pieces_of(text, ends)]
        if not self.ignore_merges:
            return self._merged_joined(text, ends)
        # Whole pieces that are tokens, the others merged: a whole token never needs its characters'
        # symbols (an unknown one among them, without an unk token, is no error then).
        pieces = pieces_of(text, ends)
        whole = list(map(self.vocab.get, pieces))
        rest = [piece for piece, token_id in zip(pieces, whole) if token_id is None]
        merged = iter(self._merged_joined(*joined(rest)) if rest else ())
        return [[token_id] if token_id is not None else next(merged) for token_id in whole]

    def _merged_each(self, pieces: list[str]) -> list[list[int]]:
        """``_merged`` of each piece: the ones not in the cache merged together (``_merged_joined``)."""
        cache = self._cache
        distinct = set(pieces)
        missing = list(distinct.difference(cache))
        if not missing:
            return list(map(cache.__getitem__, pieces))
        fresh = dict(zip(missing, self._merged_joined(*joined(missing))))
        found = list(map(fresh.__getitem__, pieces) if len(missing) == len(distinct)
                     else map(fresh.get, pieces, map(cache.get, pieces)))
        remember_all(cache, fresh)
        return found

    def _merged_joined(self, text: str, ends: list[int]) -> list[list[int]]:
        """``self._merge(self._symbols(piece))`` of each piece of ``text`` (ending at each of
        ``ends``), faster for many short pieces: the symbols of all pieces, and the rules of all
        adjacent symbols, are looked up in one go (in C), and the pieces merged in one loop
        (``_merge_by_scan``)."""
        affixed = bool(self.continuing_subword_prefix or self.end_of_word_suffix)
        symbols = self._affixed_symbols(text, ends) if affixed else list(map(self.vocab.get, text))
        if symbols is not None and None not in symbols:
            rules = (list(map(self.merges.get, pair_keys(symbols), repeat(NO_RULE))) if affixed
                     else self._character_rules(text))
        else:  # a character that is no token (byte fallback, unk): each piece's own symbols
            pieces_symbols = list(map(self._symbols, pieces_of(text, ends)))
            symbols, ends = list(chain.from_iterable(pieces_symbols)), list(accumulate(map(len, pieces_symbols)))
            rules = list(map(self.merges.get, pair_keys(symbols), repeat(NO_RULE)))
        # A piece's rules are the ones between its symbols; the one joining it to the next is unused.
        merged = self._merge_by_scan(symbols, rules, ends)
        if None in merged:  # pieces too long to scan
            for at, (start, end) in enumerate(zip([0, *ends[:-1]], ends)):
                if merged[at] is None:
                    merged[at] = self._merge_by_queue(symbols[start:end])
        return merged

    def _affixed_symbols(self, text: str, ends: list[int]) -> list[int | None] | None:
        """The symbols of each piece of ``text`` (ending at each of ``ends``) with the model's
        affixes, as _symbols gives them where every character's token is in the vocab: the
        continuing prefix on every character but a piece's first, the suffix on its last, looked
        up in C through tables of the characters seen so far (None for no pieces or an empty one). With
        the prefix "##", ``("abc", [2, 3])`` -> the ids of "a", "##b" and "c"."""
        prefix, suffix = self.continuing_subword_prefix or "", self.end_of_word_suffix or ""
        starts = [0, *ends[:-1]]
        if not ends or 0 in map(operator.sub, ends, starts):
            return None
        ids = list(map(self._affixed_ids(prefix, "").__getitem__, text))
        for at, token_id in zip(starts, map(self.vocab.get, map(text.__getitem__, starts))):  # no prefix first
            ids[at] = token_id
        if suffix:
            alone, last = self._affixed_ids("", suffix), self._affixed_ids(prefix, suffix)
            for start, end in zip(starts, ends):
                ids[end - 1] = (alone if end - start == 1 else last)[text[end - 1]]
        return ids

    def _affixed_ids(self, prefix: str, suffix: str) -> AffixedIds:
        table = self._affixed_tables.get((prefix, suffix))
        if table is None:
            table = self._affixed_tables[prefix, suffix] = AffixedIds(self.vocab, prefix, suffix)
        return table

    def _character_rules(self, text: str) -> list[int]:
        """The packed rule (or NO_RULE) of each pair of adjacent characters of ``text``, each
        character being one token: found by the pair of characters (zip() makes them in C, and
        their hashes are the characters' cached ones) in a table of the pairs seen so far, filled
        on first sight. ``"abc"`` -> the rules of ("a", "b") and ("b", "c")."""
        table = self._pair_rules
        rules = list(map(table.get, zip(text, text[1:])))
        if None in rules:
            if len(table) >= PAIR_TABLE_CAPACITY:  # a new table: another thread may be reading the old one
                table = self._pair_rules = {}
            token_id, rule_of = self.vocab.__getitem__, self.merges.get
            table.update((pair, rule_of(pair_key(token_id(pair[0]), token_id(pair[1])), NO_RULE))
                         for pair in set(zip(text, text[1:])).difference(table))
            rules = list(map(table.__getitem__, zip(text, text[1:])))
        return rules

    def _merged(self, piece: str) -> list[int]:
        """The merged ids of ``piece`` (ignore_merges aside), from the cache when seen before."""
        cached = self._cache.get(piece)
        if cached is None:
            cached = self._merge(self._symbols(piece))
            remember(self._cache, piece, cached)
        return cached

    def chunks(self, piece: str) -> list[str]:
        """``piece`` cut where no merge can ever join the two sides, so that merging each part
        alone gives the ids of merging it whole (a long piece then costs like its words).

        A cut goes before a run of a separator (CHUNK_SEPARATORS) that follows another character,
        when every merge whose right token starts with that separator has a left token made of it
        only: the token ending at the cut ends with the other character's symbol, so no merge takes
        it. Llama 2's "▁" is such a separator: ``"▁the▁▁cat"`` -> ``"▁the"``, ``"▁▁cat"``. A piece
        whose characters are all tokens is cut by the finer rule of _make_cut_pattern instead.
        """
        if self._cut_pattern is False:
            self._cut_pattern = self._make_cut_pattern()
        if self._cut_pattern is not None and self.characters().issuperset(piece):
            return self._cut_pattern.split(piece)
        if self._chunk_pattern is False:
            self._chunk_pattern = self._make_chunk_pattern()
        return [piece] if self._chunk_pattern is None else self._chunk_pattern.findall(piece)

    def characters(self) -> frozenset[str]:
        """The characters that are tokens by themselves (found on first use): with the vocab
        a=0, b=1, ab=2, ``{"a", "b"}``."""
        if self._characters is None:
            self._characters = frozenset(token for token in self.vocab if len(token) == 1)
        return self._characters

    def _make_chunk_pattern(self) -> regex.Pattern[str] | None:
        # Every character must give a symbol, or a dropped one would let the tokens on either
        # side of a cut meet; affixes make a character's symbol depend on its position.
        if self.unk_token is None or self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        separators = {c for c in CHUNK_SEPARATORS if c in self.vocab and self.unk_token.strip(c)}
        tokens = self.id_to_token
        for key in self.merges:
            left, right = tokens(key >> ID_BITS), tokens(key & ID_MASK)
            if right[:1] in separators and left.strip(right[:1]):
                separators.discard(right[:1])
        if not separators:
            return None
        runs = "|".join(f"{regex.escape(c)}+" for c in sorted(separators))
        others = "[^" + "".join(map(regex.escape, sorted(separators))) + "]"
        # A chunk: a run of one separator (or none, at the start), then everything up to the next.
        return regex.compile(f"(?:{runs})?{others}+|{runs}")

    def _make_cut_pattern(self) -> regex.Pattern[str] | None:
        """Where chunks() cuts a piece whose characters are all tokens when _make_chunk_pattern
        finds no separator: before a separator (CHUNK_SEPARATORS) that follows a character ``c``
        such that no token a merge makes holds ``c`` then the separator. Every symbol is then a
        token spelling the characters it covers, and a symbol across the cut would hold those two.
        With the merge "e ▁", ``"▁a▁be▁c"`` -> ``"▁a"``, ``"▁be▁c"``."""
        if self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        separators = [c for c in CHUNK_SEPARATORS if c in self.vocab]
        made = [self.id_to_token(rule & ID_MASK) for rule in self.merges.values()]
        cuts = []
        for separator in separators:
            joining = {token[at - 1] for token in made if token.find(separator, 1) > 0
                       for at in range(1, len(token)) if token[at] == separator}
            before = "[^" + "".join(map(regex.escape, sorted(joining))) + "]" if joining else "."
            cuts.append(f"(?<={before})(?={regex.escape(separator)})")
        return regex.compile("|".join(cuts), regex.DOTALL) if cuts else None

    def _symbols(self, piece: str) -> list[int]:
        """One id per character (or per byte, or one unk per unknown run) before any merge."""
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        tokens: str | list[str] = piece
        if (prefix or suffix) and piece:  # each character's token spelled in C: the prefix after the first, the suffix on the last
            tokens = [piece[0], *map(prefix.__add__, piece[1:])] if prefix else list(piece)
            if suffix:
                tokens[-1] += suffix
        ids = list(map(self.vocab.get, tokens))
        if None not in ids:  # every character's token is in the vocab: the common case, without a loop here
            return ids
        ids = []
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
        """Apply merges to ``ids``, always the lowest-ranked adjacent pair first, leftmost on ties."""
        if len(ids) <= SCAN_MAX_SYMBOLS:
            return self._merge_by_scan(ids, list(map(self.merges.get, pair_keys(ids), repeat(NO_RULE))), [len(ids)])[0]
        return self._merge_by_queue(ids)

    def _merge_by_scan(self, symbols: list[int], rules: list[int], ends: list[int], none: int = NO_RULE,
                       id_mask: int = ID_MASK, id_bits: int = ID_BITS,
                       longest: int = SCAN_MAX_SYMBOLS, min=min, len=len) -> list[list[int] | None]:
        """``_merge`` of each of the pieces that ``symbols`` holds one after another, the piece
        ending at each of ``ends``; None for a piece longer than ``longest`` (SCAN_MAX_SYMBOLS).
        ``rules`` holds the rule (or ``none``) of each adjacent pair of ``symbols``.

        A piece is merged by rescanning its pairs: after each merge only the two pairs it touched
        are looked up again, and the next merge is the smallest packed rule (min() and index()
        run in C; index() finds the leftmost of equal ones). One loop over all the pieces, without
        a call per piece, as most of the time on new words is spent here; the defaults make the
        constants local names. ``_merge_by_scan([0, 1, 2], [rule "a b", none], [3])`` for "abc"
        with the one merge "a b" is ``[[ab, 2]]``.
        """
        rule_of = self.merges.get
        merged_pieces: list[list[int] | None] = []
        append = merged_pieces.append
        start = 0
        for end in ends:
            size, ids = end - start, symbols[start:end]
            if size < 2 or size > longest:  # (rules[0:-1] of a first empty piece would be wrong)
                append(ids if size < 2 else None)
                start = end
                continue
            pair_rules = rules[start:end - 1]
            start = end
            while True:
                best = min(pair_rules)
                if best == none:
                    break
                at = pair_rules.index(best)
                ids[at] = merged = best & id_mask
                del ids[at + 1], pair_rules[at]
                if at:
                    pair_rules[at - 1] = rule_of(ids[at - 1] << id_bits | merged, none)
                if at < len(pair_rules):
                    pair_rules[at] = rule_of(merged << id_bits | ids[at + 1], none)
                elif not pair_rules:
                    break
            append(ids)
        return merged_pieces

    def _merge_by_queue(self, ids: list[int]) -> list[int]:
        """``_merge`` for long pieces.

        Symbols form a linked list over positions in ``ids`` (a merged-away one becomes -1); a heap
        holds candidate merges as ``rank << 32 | left position``, which orders as (rank, position)
        would, several times faster. A merge changes its neighbours' pairs, so popped candidates
        whose pair has changed since they were queued are skipped rather than removed from the heap.
        """
        rule_of = self.merges.get
        following = list(range(1, len(ids) + 1))
        following[-1] = -1
        preceding = list(range(-1, len(ids) - 1))
        queue = [rule & RANK_MASK | left for left, rule in enumerate(map(rule_of, pair_keys(ids))) if rule is not None]
        heapq.heapify(queue)
        push, pop = heapq.heappush, heapq.heappop
        while queue:
            entry = pop(queue)
            left = entry & ID_MASK
            right = following[left]
            if ids[left] < 0 or right == -1:
                continue
            rule = rule_of(ids[left] << ID_BITS | ids[right])
            if rule is None or (rule ^ entry) & RANK_MASK:  # a pair's rank is unique: this spots stale entries
                continue
            merged = ids[left] = rule & ID_MASK
            ids[right] = -1
            after = following[left] = following[right]
            before = preceding[left]
            if after != -1:
                preceding[after] = left
                rule = rule_of(merged << ID_BITS | ids[after])
                if rule is not None:
                    push(queue, rule & RANK_MASK | left)
            if before != -1:
                rule = rule_of(ids[before] << ID_BITS | merged)
                if rule is not None:
                    push(queue, rule & RANK_MASK | before)
        return [token_id for token_id in ids if token_id >= 0]


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
        self._cache: dict[str, list[int]] = {}  # never handed out: callers get copies

    @classmethod
    def from_json(cls, node: dict, where: str) -> WordPiece:
        max_chars = usize_field(node, "max_input_chars_per_word", where)
        return cls(_vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab")),
                   field(node, "unk_token", where, str), field(node, "continuing_subword_prefix", where, str),
                   max_chars, where)

    def tokenize(self, piece: str) -> list[int]:
        """The ids of one piece, from the cache when seen before."""
        cached = self._cache.get(piece)
        if cached is None:
            cached = self._longest_matches(piece)
            remember(self._cache, piece, cached)
        return list(cached)

    def _longest_matches(self, piece: str) -> list[int]:
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

    @classmethod
    def from_json(cls, node: dict, where: str) -> WordLevel:
        return cls(_vocab_from_json(field(node, "vocab", where, dict), child(where, "vocab")),
                   field(node, "unk_token", where, str), where)

    def tokenize(self, piece: str) -> list[int]:
        token_id = self.vocab.get(piece)
        return [token_id if token_id is not None else self._unk_id()]

    def tokenize_all(self, pieces: list[str]) -> list[int]:
        """The ids of ``pieces`` one after another, looked up in C: ``["a", "zz"]`` -> ``[a, unk]``."""
        ids = list(map(self.vocab.get, pieces))
        if None in ids:
            unk_id = self._unk_id()
            ids = [unk_id if token_id is None else token_id for token_id in ids]
        return ids


Model = BPE | WordPiece | WordLevel | Unigram
MODELS: dict[str, type[Model]] = {"BPE": BPE, "WordPiece": WordPiece, "WordLevel": WordLevel, "Unigram": Unigram}
# Files from before models had a "type": the oracle tries each shape in this order (a WordLevel
# node is also a WordPiece one without two fields, so WordPiece goes first).
UNTYPED_MODELS = tuple((name, model, UNTYPED) for name, model in MODELS.items())


def model_from_json(node: dict, where: str) -> Model:
    return build_component(node, where, "model", MODELS, UNTYPED_MODELS)


def _vocab_from_json(vocab: dict, where: str) -> dict[str, int]:
    # Checked in bulk first (loading a 262k vocabulary is mostly this); the loop names the culprit.
    ids = vocab.values()
    if set(map(type, ids)) <= {int} and (not ids or 0 <= min(ids) <= max(ids) <= U32_MAX) \
            and len(set(ids)) == len(ids):
        return vocab
    # HF accepts two tokens with one id and then decodes that id arbitrarily; impl refuses.
    token_by_id: dict[int, str] = {}
    for token, token_id in vocab.items():
        u32_value(token_id, child(where, token))
        if token_id in token_by_id:
            raise UnsupportedError(child(where, token),
                                   f"id {token_id} is already the id of {token_by_id[token_id]!r}")
        token_by_id[token_id] = token
    return vocab


def _merge_rules_from_json(entries: list, vocab: dict[str, int], prefix: str | None,
                           where: str) -> MergeRules | Callable[[], MergeRules]:
    """The rules of a ``merges`` list, whose entries are all ``"a b"`` strings or all ``["a", "b"]``:
    for the usual file, checked now and built on first use; else read entry by entry now."""
    ids = _merge_ids(entries, vocab, prefix)
    if ids is None:  # something is off, or unusual: the entry-by-entry reading says what
        return _merge_rules(_merge_pairs_from_json(entries, where), vocab, prefix, where)
    return functools.partial(_packed_rules, *ids)


def _merge_ids(entries: list, vocab: dict[str, int], prefix: str | None) -> tuple[list[int], ...] | None:
    """(left ids, right ids, merged ids) of a well-formed ``merges`` list whose tokens, and the
    tokens they make, are all in the vocab, found by map()s running in C; None for anything else
    (an error, merges.txt's "#version" line, a continuing_subword_prefix)."""
    if not entries:
        return [], [], []
    if isinstance(entries[0], str):
        if set(map(type, entries)) != {str} or any(map(operator.methodcaller("startswith", "#version"), entries)):
            return None
        entries = list(map(operator.methodcaller("split", " "), entries))
    elif set(map(type, entries)) != {list}:
        return None
    if prefix or set(map(len, entries)) != {2}:
        return None
    lefts, rights = list(map(operator.itemgetter(0), entries)), list(map(operator.itemgetter(1), entries))
    if set(map(type, chain(lefts, rights))) != {str}:
        return None
    token_id = vocab.get
    ids = list(map(token_id, lefts)), list(map(token_id, rights)), list(map(token_id, map(operator.add, lefts, rights)))
    return None if any(None in found for found in ids) else ids


def _packed_rules(left_ids: list[int], right_ids: list[int], merged_ids: list[int]) -> MergeRules:
    """The rules of merges given by ids, ranked by position; a repeated pair keeps its last rank, as in HF."""
    with collector_paused():
        keys = map(operator.or_, map(operator.lshift, left_ids, repeat(ID_BITS)), right_ids)
        packed = map(operator.or_, map(operator.lshift, range(len(merged_ids)), repeat(ID_BITS)), merged_ids)
        return dict(zip(keys, packed))


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: loading makes millions of objects, none of them garbage,
    and each collection their number sets off would walk them all (a third of a large load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
        rules[pair_key(vocab[left], vocab[right])] = index << ID_BITS | vocab[merged]
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
