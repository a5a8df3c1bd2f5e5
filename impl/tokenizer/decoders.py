"""Decoders: token strings back to text, one class per tokenizer.json ``decoder`` type.

Each decoder maps a list of token strings to a new list (``decode_chain``) so that a Sequence can
feed one decoder's output into the next; ``decode`` joins the final list. The semantics follow
tokenizers v0.23 (src/decoders/, plus the ByteLevel and Metaspace pre-tokenizers and the Replace
normalizer, which double as decoders there), including the inputs on which tokenizers panics:
those raise ``DecoderPanic`` here.
"""
from __future__ import annotations

import itertools

from . import normalizers
from .byte_level import BYTE_TOKEN, chars_to_bytes
from .fields import (
    ANY_TYPE, ByteLevelOptions, MetaspaceOptions, build_component, build_components, char_field, child,
    defaulted, field, optional, usize_field,
)

REPLACEMENT_CHARACTER = "\ufffd"


class DecoderPanic(ValueError):
    """Tokens on which tokenizers' decoder panics instead of returning text."""


class Decoder:
    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def raw_bytes(self, token: str) -> bytes | None:
        """The bytes this decoder turns ``token`` into, for decoders that work in bytes; else None."""
        return None

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(tokens))

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Decoder":
        """Types without options only check that there is a node."""
        return cls()


class ByteLevel(Decoder):
    """GPT-2 byte-level characters back to bytes, then the bytes as UTF-8 text.

    A token with a character outside the byte-level alphabet (an added token, typically) stands
    for its own UTF-8 bytes. Bytes are joined before decoding, so a character split across
    tokens comes back whole; invalid UTF-8 becomes U+FFFD per maximal invalid subpart, as Rust's
    ``String::from_utf8_lossy`` does (and Python's "replace" error handler, which follows the
    same Unicode recommendation).
    """

    def decode_chain(self, tokens: list[str]) -> list[str]:
        data = b"".join(_byte_level_bytes(token) for token in tokens)
        return [data.decode("utf-8", "replace")]

    def raw_bytes(self, token: str) -> bytes:
        return _byte_level_bytes(token)

    @classmethod
    def from_json(cls, node: dict, where: str) -> "ByteLevel":
        ByteLevelOptions.from_json(node, where)  # they only matter when pre-tokenizing, but are required
        return cls()


def _byte_level_bytes(token: str) -> bytes:
    data = chars_to_bytes(token)
    return token.encode("utf-8") if data is None else data


class Metaspace(Decoder):
    """The replacement character (``▁``) back to spaces.

    When the pre-tokenizer prepends a replacement (scheme "always" or "first"), every replacement
    in the first token is dropped, not only the leading one: tokenizers decodes a first token
    ``▁▁a`` to ``a``.
    """

    def __init__(self, replacement: str, prepend_scheme: str):
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme

    def decode_chain(self, tokens: list[str]) -> list[str]:
        drop_in_first = self.prepend_scheme != "never"
        return [
            token.replace(self.replacement, "" if i == 0 and drop_in_first else " ")
            for i, token in enumerate(tokens)
        ]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Metaspace":
        options = MetaspaceOptions.from_json(node, where)
        return cls(options.replacement, options.prepend_scheme)


class Replace(Decoder):
    """The Replace normalizer applied to each token, as tokenizers reuses it for decoding."""

    def __init__(self, replace: normalizers.Replace):
        self.replace = replace

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.replace.normalize(token) for token in tokens]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Replace":
        return cls(normalizers.Replace.from_json(node, where))


class ByteFallback(Decoder):
    """Runs of ``<0xXX>`` tokens back to the text their bytes spell.

    A run that is not valid UTF-8 becomes one U+FFFD per byte token, not per invalid subpart.
    """

    def decode_chain(self, tokens: list[str]) -> list[str]:
        decoded: list[str] = []
        run = bytearray()
        for token in tokens:
            byte_token = BYTE_TOKEN.fullmatch(token)
            if byte_token:
                run.append(int(byte_token[1], 16))
                continue
            decoded += _byte_run_text(run)
            run.clear()
            decoded.append(token)
        return decoded + _byte_run_text(run)

    def raw_bytes(self, token: str) -> bytes | None:
        byte_token = BYTE_TOKEN.fullmatch(token)
        return bytes([int(byte_token[1], 16)]) if byte_token else None


def _byte_run_text(run: bytearray) -> list[str]:
    if not run:
        return []
    try:
        return [run.decode("utf-8")]
    except UnicodeDecodeError:
        return [REPLACEMENT_CHARACTER] * len(run)


class Fuse(Decoder):
    """All tokens joined into one, so that later decoders see the whole text."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


class Strip(Decoder):
    """Up to ``start`` leading and ``stop`` trailing ``content`` characters removed from each token."""

    def __init__(self, content: str, start: int, stop: int):
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self._strip(token) for token in tokens]

    def _strip(self, token: str) -> str:
        leading = min(self.start, len(token) - len(token.lstrip(self.content)))
        trailing = min(self.stop, len(token) - len(token.rstrip(self.content)))
        # tokenizers indexes before the token when asked to strip more content than it has at
        # the end, and slices backwards when the two cuts cross; both panic.
        if trailing == len(token) < self.stop:
            raise DecoderPanic(f"Strip: cannot strip {self.stop} trailing {self.content!r} from {token!r}")
        if leading + trailing > len(token):
            raise DecoderPanic(f"Strip: leading and trailing cuts overlap in {token!r}")
        return token[leading:len(token) - trailing]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Strip":
        return cls(char_field(node, "content", where), usize_field(node, "start", where), usize_field(node, "stop", where))


class BPEDecoder(Decoder):
    """The end-of-word suffix becomes a space, except in the last token where it is dropped."""

    def __init__(self, suffix: str):
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [token.replace(self.suffix, "" if i == last else " ") for i, token in enumerate(tokens)]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "BPEDecoder":
        return cls(field(node, "suffix", where, str))


# Spaces the word-level tokenizers put around punctuation and English contractions.
CLEANUPS = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def _cleanup(text: str) -> str:
    for dirty, clean in CLEANUPS:
        text = text.replace(dirty, clean)
    return text


class WordPiece(Decoder):
    """Continuation tokens (``##ing``) glued to the previous token, other tokens after a space."""

    def __init__(self, prefix: str, cleanup: bool):
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        decoded = []
        for i, token in enumerate(tokens):
            if i > 0:
                token = token[len(self.prefix):] if token.startswith(self.prefix) else " " + token
            decoded.append(_cleanup(token) if self.cleanup else token)
        return decoded

    @classmethod
    def from_json(cls, node: dict, where: str) -> "WordPiece":
        return cls(field(node, "prefix", where, str), field(node, "cleanup", where, bool))


class CTC(Decoder):
    """CTC model output: repeats collapsed, pad tokens dropped, the word delimiter made a space.

    As in tokenizers, the delimiter only becomes a space when ``cleanup`` is on.
    """

    def __init__(self, pad_token: str, word_delimiter_token: str, cleanup: bool):
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        decoded = []
        for token, _repeats in itertools.groupby(tokens):
            token = token.replace(self.pad_token, "")
            if self.cleanup:
                token = _cleanup(token).replace(self.word_delimiter_token, " ")
            if token:
                decoded.append(token)
        return decoded

    @classmethod
    def from_json(cls, node: dict, where: str) -> "CTC":
        return cls(
            field(node, "pad_token", where, str),
            field(node, "word_delimiter_token", where, str),
            field(node, "cleanup", where, bool),
        )


class Sequence(Decoder):
    """Decoders applied in order, each to the previous one's tokens."""

    def __init__(self, decoders: list[Decoder]):
        self.decoders = decoders

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens

    def raw_bytes(self, token: str) -> bytes | None:
        return next((b for b in (d.raw_bytes(token) for d in self.decoders) if b is not None), None)

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Sequence":
        return cls(build_components(node, "decoders", where, "decoder", DECODERS, UNTAGGED_DECODERS))


DECODERS: dict[str, type[Decoder]] = {
    "BPEDecoder": BPEDecoder,
    "ByteFallback": ByteFallback,
    "ByteLevel": ByteLevel,
    "CTC": CTC,
    "Fuse": Fuse,
    "Metaspace": Metaspace,
    "Replace": Replace,
    "Sequence": Sequence,
    "Strip": Strip,
    "WordPiece": WordPiece,
}


# What the oracle tries, in order, for any other "type" or none: the decoders with fields that
# serde reads whatever their "type" says.
UNTAGGED_DECODERS = tuple((name, DECODERS[name], ANY_TYPE) for name in ("BPEDecoder", "WordPiece", "CTC", "Replace",
                                                                         "Strip"))


def decoder_from_json(node: dict | None, where: str) -> Decoder | None:
    """The decoder a tokenizer.json ``decoder`` node describes; None when it is null."""
    return None if node is None else build_component(node, where, "decoder", DECODERS, UNTAGGED_DECODERS)
