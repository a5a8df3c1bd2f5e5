"""sanitize_control_tokens: control tokens inside the caller's strings are encoded as text.

Before rendering, every control token in a message, tool, document or template variable is wrapped
in two private-use markers. After rendering, text between markers is encoded without added tokens,
and the rest (the template's own control tokens included) is encoded normally. As in transformers,
the control tokens are the special added tokens plus the added tokens the template's literal text
contains (or those listed in tokenizer_config's ``chat_control_tokens``), whitespace tokens aside.

    >>> marked = mark_control_tokens({"content": "hi <|im_end|>"}, control_tokens_pattern(("<|im_end|>",)))
    >>> marked["content"] == "hi " + MARK_START + "<|im_end|>" + MARK_END
    True
"""
from __future__ import annotations

import re
from functools import lru_cache

from .environment import template_literal_text

# Private-use code points transformers uses for the same purpose, so both render the same text.
MARK_START = "\U000f0000"
MARK_END = "\U000f0001"


@lru_cache(maxsize=64)
def control_tokens_pattern(tokens: tuple[str, ...]) -> re.Pattern:
    """Any of ``tokens``, longest first (a token wins over the tokens inside it); never matches if none."""
    return re.compile("|".join(map(re.escape, sorted(tokens, key=len, reverse=True))) or "(?!)")


@lru_cache(maxsize=64)
def _markers_pattern(tokens: tuple[str, ...]) -> re.Pattern:
    # A marked token (captured), or a lone marker that string methods in the template cut off.
    return re.compile(f"{MARK_START}({control_tokens_pattern(tokens).pattern}){MARK_END}|[{MARK_START}{MARK_END}]")


def control_tokens(tokenizer, template: str) -> tuple[str, ...]:
    """The added tokens a user's string may not produce as tokens under sanitize_control_tokens."""
    listed = tokenizer.config.get("chat_control_tokens")
    added = [tokenizer.added.by_id[i] for i in sorted(tokenizer.added.by_id)]
    if listed is not None:
        if not isinstance(listed, (list, tuple)):
            raise TypeError(f"`chat_control_tokens` should be a list of strings, got {listed!r}")
        return tuple(t.content for t in added if t.special or t.content in set(listed))
    literal_text = template_literal_text(template)
    # Whitespace tokens (Gemma's "\n") are in every template as ordinary text.
    return tuple(t.content for t in added
                 if t.special or (t.content in literal_text and not t.content.isspace()))


def mark_control_tokens(value, pattern: re.Pattern):
    """``value`` with each control token in its strings wrapped in markers (dict keys left alone)."""
    if isinstance(value, str):
        # Markers already in the text are dropped, so that nobody can forge a marked token.
        value = value.replace(MARK_START, "").replace(MARK_END, "")
        return pattern.sub(f"{MARK_START}\\g<0>{MARK_END}", value)
    if isinstance(value, dict):
        return {key: mark_control_tokens(item, pattern) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [mark_control_tokens(item, pattern) for item in value]
    return value


def encode_marked(tokenizer, text: str) -> list[int]:
    """Ids of a chat rendered from marked inputs: marked tokens as plain text, the rest as usual."""
    added_contents = tuple(tokenizer.added.ids)
    pieces = _markers_pattern(added_contents).split(text)  # text, marked token or None, text, ...
    newline_ids = tokenizer.encode("\n", add_special_tokens=False)
    ids = tokenizer.encode(pieces[0], add_special_tokens=False)
    for index, piece in enumerate(pieces[1:], start=1):
        if not piece:
            continue
        as_text = index % 2 == 1
        piece_ids = _encode_piece(tokenizer, piece, as_text, newline_ids)
        if as_text and tokenizer.token_to_id(piece) in piece_ids:
            raise ValueError(f"Can't sanitize {piece!r}: the tokenizer produces it from plain text")
        ids += piece_ids
    return ids


def _encode_piece(tokenizer, piece: str, as_text: bool, newline_ids: list[int]) -> list[int]:
    encode = tokenizer.encode_without_added_tokens if as_text \
        else lambda text: tokenizer.encode(text, add_special_tokens=False)
    # Encoded after a newline, which is then removed, so that SentencePiece adds no prefix space as it
    # would at the start of a text; when the newline merges into the piece, the piece alone.
    ids = encode("\n" + piece)
    if ids[:len(newline_ids)] == newline_ids:
        return ids[len(newline_ids):]
    return encode(piece)
