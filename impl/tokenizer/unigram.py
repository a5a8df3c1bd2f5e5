"""The Unigram model (SentencePiece's): the segmentation whose pieces' scores sum highest.

Mirrors tokenizers/src/models/unigram/model.rs (``encode_optimized``, the one the oracle runs):

- Viterbi over the text's characters: at each position every vocabulary piece starting there
  (shortest first) offers a path; a path replaces another only with a strictly higher score, so
  on ties the first found wins.
- A position that no one-character piece covers also offers the unknown piece, scored 10 below
  the vocabulary's lowest score. The oracle does this even when longer pieces cover the position,
  and fails then if the model has no ``unk_id``.
- Consecutive unknown pieces are fused into one (always: the oracle's ``fuse_unk`` is fixed).
  A fused piece that is no vocabulary piece becomes its ``<0xXX>`` byte tokens when
  ``byte_fallback`` is set and all exist, else the unknown id.
- Scores are the floats serde_json reads from the file, which are not always the ones Python reads
  (``_serde_json_f64``): one unit in the last place decides between paths that tie otherwise.

Example: pieces ``a`` (-1), ``b`` (-1), ``ab`` (-1.5) and ``<unk>`` (0) segment ``"abxy"`` as
``ab`` then the fused unknown ``xy``: ids ``[2, 3]`` for vocab order a, b, ab, <unk> with unk_id 3.
"""
from __future__ import annotations

import math

from ..errors import TokenizerFileError
from .byte_level import byte_token_ids
from .fields import U64_MAX, child, defaulted, field, optional
from .piece_cache import remember

UNKNOWN_PENALTY = 10.0  # K_UNK_PENALTY in model.rs
POWERS_OF_TEN = [float(f"1e{exponent}") for exponent in range(309)]  # serde_json's POW10 table


class Unigram:
    def __init__(self, pieces: list[tuple[str, float]], unk_id: int | None, byte_fallback: bool,
                 where: str = "Unigram"):
        self.pieces = pieces
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.where = where
        # A piece written twice keeps its last id, as the oracle's token -> id map does; every id
        # still decodes to its piece.
        self.vocab = {piece: token_id for token_id, (piece, _) in enumerate(pieces)}
        self._unknown_score = min((score for _, score in pieces), default=math.inf) - UNKNOWN_PENALTY
        self._lattice_trie: dict[str, tuple[int, float, bool]] | None = None  # built on first use
        self._cache: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_json(cls, node: dict, where: str) -> Unigram:
        pieces = _pieces_from_json(field(node, "vocab", where, list), child(where, "vocab"))
        unk_id = optional(node, "unk_id", where, None, int)
        if unk_id is not None and not 0 <= unk_id < len(pieces):
            raise TokenizerFileError(child(where, "unk_id"),
                                     f"unk_id {unk_id} is not an index of the vocab (it has {len(pieces)} pieces)")
        return cls(pieces, unk_id, defaulted(node, "byte_fallback", where, False, bool), where)

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.pieces[token_id][0] if 0 <= token_id < len(self.pieces) else None

    def tokenize(self, piece: str) -> list[int]:
        """The ids of one pre-tokenized piece, from the cache when seen before."""
        cached = self._cache.get(piece)
        if cached is None:
            cached = tuple(self._tokenized(piece))
            remember(self._cache, piece, cached)
        return list(cached)

    def _fused_unknown_ids(self, segment: str) -> list[int]:
        """The ids of a run of unknown pieces fused into one: the piece itself when the vocabulary
        has it, else its ``<0xXX>`` byte tokens (byte_fallback), else the unknown id."""
        token_id = self.vocab.get(segment)
        if token_id is not None:
            return [token_id]
        byte_ids = byte_token_ids(self.vocab, segment) if self.byte_fallback else None
        return byte_ids if byte_ids is not None else [self._required_unk_id()]

    def _required_unk_id(self) -> int:
        if self.unk_id is None:
            raise TokenizerFileError(child(self.where, "unk_id"),
                                     "the text has a character no piece covers, and the model has no unk_id")
        return self.unk_id

    def _trie(self) -> dict[str, tuple[int, float, bool]]:
        """Each piece and each proper prefix of one -> (the piece's id, or -1 for a prefix only;
        its score; whether some longer piece starts with it). One lookup per substring tells the
        Viterbi step both whether a piece ends there and whether to read on."""
        if self._lattice_trie is None:
            prefixes = {piece[:length] for piece in self.vocab for length in range(1, len(piece))}
            trie = dict.fromkeys(prefixes, (-1, 0.0, True))
            trie.update((piece, (token_id, self.pieces[token_id][1], piece in prefixes))
                        for piece, token_id in self.vocab.items())
            self._lattice_trie = trie
        return self._lattice_trie

    def _tokenized(self, text: str) -> list[int]:
        """The ids of the best path's pieces, consecutive unknown ones fused (_fused_unknown_ids)."""
        size = len(text)
        best_score = [-math.inf] * (size + 1)
        best_score[0] = 0.0
        best_start = [-1] * (size + 1)  # -1: no path ends here yet
        best_id = [0] * (size + 1)
        trie, unknown_score = self._trie().get, self._unknown_score

        for start in range(size):
            base, covered_alone, end = best_score[start], False, start
            while end < size:
                end += 1
                node = trie(text[start:end])
                if node is None:
                    break
                token_id, score, extends = node
                if token_id >= 0:
                    # A path replaces the best one ending here only with a strictly higher score
                    # (the first found wins ties); -inf scores only when no path ends here yet.
                    candidate = base + score
                    if candidate > best_score[end] or best_start[end] < 0:
                        best_score[end], best_start[end], best_id[end] = candidate, start, token_id
                    covered_alone = covered_alone or end == start + 1
                if not extends:
                    break
            # The oracle fails for want of an unk_id only when the unknown piece would be taken.
            if not covered_alone:
                candidate = base + unknown_score
                if candidate > best_score[start + 1] or best_start[start + 1] < 0:
                    best_score[start + 1], best_start[start + 1] = candidate, start
                    best_id[start + 1] = self._required_unk_id()

        # Back from the end: the path's ids, last first; unknown_end: where the run of unknown
        # pieces being fused ends.
        ids: list[int] = []
        end, unknown_end, unk_id = size, None, self.unk_id
        while end > 0:
            token_id = best_id[end]
            if token_id == unk_id:
                unknown_end = end if unknown_end is None else unknown_end
            else:
                if unknown_end is not None:
                    ids += reversed(self._fused_unknown_ids(text[end:unknown_end]))
                    unknown_end = None
                ids.append(token_id)
            end = best_start[end]
        if unknown_end is not None:
            ids += reversed(self._fused_unknown_ids(text[:unknown_end]))
        ids.reverse()
        return ids


def _pieces_from_json(entries: list, where: str) -> list[tuple[str, float]]:
    """``[["piece", score], ...]``; scores are finite numbers (JSON has no others)."""
    pieces = []
    for index, entry in enumerate(entries):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise TokenizerFileError(child(where, index), f'expected ["piece", score], found {entry!r}')
        pieces.append((entry[0], _finite(entry[1], child(child(where, index), 1))))
    return pieces


def _finite(value: object, where: str) -> float:
    is_json_number = (isinstance(value, int) and not isinstance(value, bool)
                      or isinstance(value, float) and math.isfinite(value))
    number = _serde_json_f64(value) if is_json_number else math.nan
    if not math.isfinite(number):
        raise TokenizerFileError(where, f"expected a finite number, found {value!r}")
    return number


def _serde_json_f64(value: int | float) -> float:
    """The float serde_json reads (as tokenizers builds it, without its ``float_roundtrip`` feature)
    from the JSON number Python read as ``value``: the digits that fit a u64 as a float, then one
    multiplication or division by a power of ten. Two roundings, so it can miss the nearest float by
    one unit in the last place: -7.3529038581876165 -> -7.352903858187616. Infinite where serde_json
    fails for a number out of range.

    The file's own digits are gone, but files hold the shortest digits that give their float
    (serde_json writes those, and so does json.dumps): ``repr(value)``'s.
    """
    text = repr(value)
    if isinstance(value, float) and "e" not in text:  # the common shape, read faster: -7.352903858187616
        integer, _, fraction = text.partition(".")
        # int / float rounds the int to a float first; ``or value`` keeps the sign of -0.0
        return int(integer + fraction) / POWERS_OF_TEN[len(fraction)] or value
    mantissa, _, exponent_text = text.partition("e")
    integer, _, fraction = mantissa.lstrip("-").partition(".")
    digits, exponent = integer + fraction, int(exponent_text or 0) - len(fraction)
    if int(digits) > U64_MAX:  # only an integer: a float's repr has at most 17 significant digits
        # serde_json keeps the leading digits that fit a u64; the others only count in the exponent
        kept = 20 if int(digits[:20]) <= U64_MAX else 19
        digits, exponent = digits[:kept], exponent + len(digits) - kept
    number = float(int(digits))
    while abs(exponent) >= len(POWERS_OF_TEN) and number != 0.0:
        if exponent > 0:
            return math.inf
        number, exponent = number / 1e308, exponent + 308
    if number != 0.0:
        power = POWERS_OF_TEN[abs(exponent)]
        number = number * power if exponent >= 0 else number / power
    return -number if mantissa.startswith("-") else number
