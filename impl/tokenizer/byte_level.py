"""GPT-2's byte-level alphabet: every byte as one printable character.

ByteLevel pre-tokenizers map each UTF-8 byte to a character of this alphabet before the model sees
it, and ByteLevel decoders map the characters back to bytes. Printable Latin-1 bytes stand for
themselves; the other 68 bytes are moved to U+0100 and up, in byte order.
"""
from __future__ import annotations

import re

# A byte-fallback token as decoders read it: Rust's u8::from_str_radix accepts a leading "+", so
# "<0x+A>" is the byte 0x0A (vocabularies spell the bytes as byte_token_text does).
BYTE_TOKEN = re.compile(r"<0x(\+[0-9A-Fa-f]|[0-9A-Fa-f]{2})>")


def _bytes_to_unicode() -> dict[int, str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    shifted = 256
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(shifted)
            shifted += 1
    return mapping


BYTE_TO_CHAR: dict[int, str] = _bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}
# str.translate table from the Latin-1 character of each byte to its byte-level character.
_LATIN1_TO_CHAR: dict[int, str] = dict(BYTE_TO_CHAR)


def bytes_to_chars(data: bytes) -> str:
    """The byte-level alphabet spelling of ``data``: ``" é".encode()`` -> ``"ĠÃ©"``."""
    return data.decode("latin-1").translate(_LATIN1_TO_CHAR)


def chars_to_bytes(text: str) -> bytes | None:
    """The bytes spelled by ``text``, or None when a character is outside the alphabet."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError:
        return None


def byte_token_ids(vocab: dict[str, int], text: str) -> list[int] | None:
    """The ids of the ``<0xXX>`` tokens spelling ``text``'s UTF-8 bytes (byte fallback), or None
    when the vocabulary lacks one of them. ``"é"`` -> the ids of ``<0xC3>`` and ``<0xA9>``."""
    ids = [vocab.get(byte_token_text(byte)) for byte in text.encode()]
    return None if None in ids else ids


def byte_token_text(byte: int) -> str:
    """The byte-fallback token of ``byte`` as vocabularies spell it: ``0xC3`` -> ``"<0xC3>"``."""
    return f"<0x{byte:02X}>"
