"""impl's pattern of a schema with its repeated sub-patterns shared: what lets a sampler walk patterns
of hundreds of megabytes (a ``$ref`` unfolded three levels deep, inlined at every use).

``shared_pattern(schema)`` runs impl's own translator, except that every value's sub-pattern of
``SHARED_SIZE`` characters or more without a top-level alternation is stored once in a table and written as
a two-character token (``TOKEN_MARK`` and the piece's number). ``SharedPattern.expands_to(text)``
checks, piece by piece and without building it, that the tokens expanded give exactly ``text``
(``json_schema_to_regex(schema)``): only then is sampling the shared form sampling impl's pattern.

Example: for a schema whose pattern is 400 MB, ``shared_pattern(schema).pieces`` holds a few
thousand pieces of a few kilobytes each, and ``expands_to(json_schema_to_regex(schema))`` is True.
"""
from __future__ import annotations

from dataclasses import dataclass

from textbound.impl.structured import schema as impl_schema
from textbound.impl.structured.regex_syntax import Alt, parse

SHARED_SIZE = 64  # characters: a shorter sub-pattern is left in place (a token saves little)
TOKEN_MARK = chr(0x10FFFD)  # a private-use code point that begins every token
_FIRST_ID = 0xF0000  # piece n is written TOKEN_MARK + chr(_FIRST_ID + n)
_MAX_PIECES = 0x10FFFC - _FIRST_ID  # ids stay below TOKEN_MARK


@dataclass(frozen=True)
class SharedPattern:
    """``root`` and ``pieces``: texts of impl's regex syntax in which a token stands for a piece."""
    root: str
    pieces: tuple[str, ...]

    def expanded_length(self) -> int:
        """Characters of the pattern the tokens stand for (computed without expanding it)."""
        lengths: list[int] = []
        for text in self.pieces:  # a piece only refers to pieces made before it
            lengths.append(self._length(text, lengths))
        return self._length(self.root, lengths)

    def expands_to(self, text: str) -> bool:
        """Whether the tokens, expanded, give exactly ``text`` (compared chunk by chunk)."""
        if TOKEN_MARK in text or self.expanded_length() != len(text):
            return False
        at, pending = 0, [self.root]
        while pending:
            chunk = pending.pop()
            if isinstance(chunk, int):
                pending.append(self.pieces[chunk])
                continue
            literal, *rest = chunk.split(TOKEN_MARK)
            if not text.startswith(literal, at):
                return False
            at += len(literal)
            for part in reversed(rest):
                pending.append(part[1:])
                pending.append(piece_id(part[0]))
        return at == len(text)

    @staticmethod
    def _length(text: str, lengths: list[int]) -> int:
        literal, *rest = text.split(TOKEN_MARK)
        return len(literal) + sum(lengths[piece_id(part[0])] + len(part) - 1 for part in rest)


def piece_id(char: str) -> int:
    """The piece number a token's second character names: ``piece_id(chr(0xF0002))`` -> 2."""
    return ord(char) - _FIRST_ID


class _SharingTranslator(impl_schema._Translator):
    """impl's translator with every long value pattern (without a top-level ``|``) replaced by its token."""

    def __init__(self, root, punctuation):
        super().__init__(root, punctuation)
        self.pieces: list[str] = []
        self._ids: dict[str, int] = {}

    def value(self, schema, path: str, refs: tuple[str, ...]) -> str:
        return self._shared(super().value(schema, path, refs))

    def any_value(self, depth: int) -> str:
        return self._shared(super().any_value(depth))

    def _followed(self, head: str, rest: str) -> str:
        return head + self._shared(rest)

    def _shared(self, text: str) -> str:
        if text in self._ids:
            return self._token(self._ids[text])
        if len(text) < SHARED_SIZE or len(self.pieces) >= _MAX_PIECES or not _is_one_unit(text):
            return text
        self._ids[text] = len(self.pieces)
        self.pieces.append(text)
        return self._token(self._ids[text])

    @staticmethod
    def _token(index: int) -> str:
        return TOKEN_MARK + chr(_FIRST_ID + index)


def _is_one_unit(text: str) -> bool:
    """Whether ``text`` has no alternation at its top level: written between other text it then means
    what its token means there (a quantifier after a token is told apart when the shared form is
    parsed: it would bind to the token's last character)."""
    try:
        return not isinstance(parse(text), Alt)
    except ValueError:
        return False


def shared_pattern(schema, whitespace: str | None = None) -> SharedPattern:
    """impl's pattern of ``schema`` in shared form (ValueError where impl refuses the schema)."""
    schema = impl_schema.rebased_refs(schema)
    translator = _SharingTranslator(schema, impl_schema.Punctuation(whitespace))
    root = translator.value(schema, "$", ())
    return SharedPattern(root, tuple(translator.pieces))
