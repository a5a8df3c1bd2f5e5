"""The Precompiled normalizer: SentencePiece's compiled normalization rules (``precompiled_charsmap``).

The charsmap (base64 in tokenizer.json) is ``[u32 trie size][trie: u32 units][replacements]``:
a darts-clone double-array trie over UTF-8 bytes whose leaves hold offsets into the replacement
blob, where each replacement ends at a NUL byte. As the oracle does (spm_precompiled 0.1.4 and
tokenizers/src/normalizers/precompiled.rs), the text is read one extended grapheme cluster at a
time: a cluster shorter than 6 bytes whose bytes start with a key is replaced whole by that key's
replacement, the *shortest* key found; any other cluster is looked up character by character.

Example (the ``nmt_nfkc`` rules): ``"ｈｉ\u3000①"`` -> ``"hi 1"``; ``"Ａ\u0301"`` (one cluster,
starting with the key ``Ａ``) -> ``"A"``, the accent lost with it.
"""
from __future__ import annotations

import base64
import binascii
import struct

import regex

from ..errors import TokenizerFileError
from .fields import child, field
from .normalizer_base import Normalizer
from .patterns import assigned_after

GRAPHEME = regex.compile(r"\X")
# The oracle's clusters come from unicode-segmentation 1.13, at Unicode 17.0; regex's are newer.
# A code point assigned since is a cluster of its own there (unassigned: Grapheme_Cluster_Break
# Other), so regex's clusters are cut before each.
SEGMENTATION_UNICODE = "17.0"
NEWER_THAN_SEGMENTATION = regex.compile(f"(?=[{regex.escape(assigned_after(SEGMENTATION_UNICODE))}])")
# The same code points as a set: whether a text holds one is found in C, where searching it with a
# class of thousands of characters takes seconds on a megabyte.
ASSIGNED_SINCE_SEGMENTATION = frozenset(assigned_after(SEGMENTATION_UNICODE))
WHOLE_CLUSTER_MAX_BYTES = 5  # longer clusters go character by character
CLUSTER_TABLE_CAPACITY = 100_000


class CorruptCharsmap(ValueError):
    """A charsmap whose trie or replacements point outside themselves (the oracle panics)."""


class Precompiled(Normalizer):
    def __init__(self, trie: tuple[int, ...], replacements: bytes):
        self.trie = trie
        self.replacements = replacements
        self._cache: dict[str, str | None] = {}
        self._normalized_clusters: dict[str, str] = {}

    @classmethod
    def from_json(cls, node: dict, where: str) -> Precompiled:
        encoded = field(node, "precompiled_charsmap", where, str)
        # The oracle panics on every fault below (tokenizers unwraps the charsmap's parse).
        where = child(where, "precompiled_charsmap")
        try:
            charsmap = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise TokenizerFileError(where, f"not base64: {exc}") from None
        if len(charsmap) < 4:
            raise TokenizerFileError(where, f"{len(charsmap)} bytes: too short to hold the trie's size")
        (trie_bytes,) = struct.unpack_from("<I", charsmap)
        units = trie_bytes // 4
        if 4 + 4 * units > len(charsmap):
            raise TokenizerFileError(where, f"the trie's size says {trie_bytes} bytes, "
                                            f"but only {len(charsmap) - 4} follow it")
        replacements = charsmap[4 + 4 * units:]
        try:
            replacements.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TokenizerFileError(where, f"the replacements are not UTF-8 (byte {exc.start})") from None
        return cls(struct.unpack_from(f"<{units}I", charsmap, 4), replacements)

    def normalize(self, text: str) -> str:
        # Each distinct cluster is normalized once, and the text joined from a table in C.
        clusters = _clusters(text)
        table = self._normalized_clusters
        missing = set(clusters).difference(table)
        if missing:
            if len(table) + len(missing) > CLUSTER_TABLE_CAPACITY:  # a new table: another thread may read the old
                table = {}
                if len(missing) <= CLUSTER_TABLE_CAPACITY:
                    self._normalized_clusters = table
            table.update(zip(missing, map(self._normalized_cluster, missing)))
        return "".join(map(table.__getitem__, clusters))

    def _normalized_cluster(self, cluster: str) -> str:
        if len(cluster.encode()) <= WHOLE_CLUSTER_MAX_BYTES:
            replaced = self._replacement(cluster)
            if replaced is not None:
                return replaced
        return "".join(char if replaced is None else replaced
                       for char, replaced in zip(cluster, map(self._replacement, cluster)))

    def _keeps_start(self, text: str) -> bool:
        # The oracle records a leading deletion nowhere (tokenizers' transform with an initial
        # offset of 0), so the first character left still counts as the text's start.
        return True

    def _replacement(self, chunk: str) -> str | None:
        if chunk not in self._cache:
            if len(self._cache) >= CLUSTER_TABLE_CAPACITY:
                self._cache.clear()
            offset = self._first_key_value(chunk.encode())
            self._cache[chunk] = None if offset is None else self._replacement_at(offset)
        return self._cache[chunk]

    def _first_key_value(self, key: bytes) -> int | None:
        """The value of the shortest key that ``key`` starts with (darts-clone's common prefix
        search, stopping at its first result); a NUL byte ends the key."""
        trie = self.trie
        try:
            position = _offset(trie[0])
            for byte in key:
                if byte == 0:
                    return None
                position ^= byte
                unit = trie[position]
                if unit & ((1 << 31) | 0xFF) != byte:  # the unit's label
                    return None
                position ^= _offset(unit)
                if unit >> 8 & 1:  # has a leaf
                    return trie[position] & ((1 << 31) - 1)
        except IndexError:
            raise CorruptCharsmap(f"Precompiled: the charsmap's trie points past its end looking up {key!r}") \
                from None
        return None

    def _replacement_at(self, offset: int) -> str:
        end = self.replacements.find(b"\0", offset)
        try:
            if offset > len(self.replacements):
                raise UnicodeDecodeError("utf-8", self.replacements, offset, offset, "offset past the end")
            return self.replacements[offset:end if end >= 0 else len(self.replacements)].decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptCharsmap(f"Precompiled: the charsmap's replacement at byte {offset} is not "
                                  f"whole UTF-8 characters") from None


def _clusters(text: str) -> list[str]:
    """Extended grapheme clusters, as the oracle's Unicode version draws them."""
    clusters = GRAPHEME.findall(text)
    if ASSIGNED_SINCE_SEGMENTATION.isdisjoint(text):
        return clusters
    return [part for cluster in clusters for part in NEWER_THAN_SEGMENTATION.split(cluster) if part]


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)
