"""The base class of normalizers, apart from their registry so that normalizers defined in their own
module (Precompiled) and the registry that lists them (impl.tokenizer.normalizers) both import it.

    >>> class Upper(Normalizer):
    ...     def normalize(self, text): return text.upper()
    >>> Upper().normalize_piece("abc")
    ('ABC', True)
"""
from __future__ import annotations


class Normalizer:
    """A tokenizer.json normalizer: rewrites the whole text before pre-tokenization."""

    @classmethod
    def from_json(cls, node: dict, where: str) -> Normalizer:
        """Build from the normalizer's JSON node; types with no fields need no override."""
        return cls()

    def normalize(self, text: str) -> str:
        raise NotImplementedError

    def normalize_piece(self, text: str) -> tuple[str, bool]:
        """The normalized text, and whether its first character still comes from the first
        character of ``text``.

        tokenizers tracks where every normalized character came from; Metaspace's "first" scheme
        prepends only to a piece that begins at original offset 0, which a normalizer that deletes
        the leading character (Strip, StripAccents, a Replace) moves.
        """
        return self.normalize(text), self._keeps_start(text)

    def _keeps_start(self, text: str) -> bool:
        # Most normalizers map the first character to something; those that delete it map it,
        # alone, to nothing. Asked of every piece, so the answer is kept per character.
        first = text[:1]
        answers = self.__dict__.setdefault("_keeps_first", {})
        if first not in answers:
            answers[first] = bool(self.normalize(first))
        return answers[first]
