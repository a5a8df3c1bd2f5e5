"""A rendered chat to what apply_chat_template returns when it tokenizes: ids, attention, assistant masks.

The text is encoded without the post-processor's special tokens (the template writes its own). The
assistant mask marks every token that overlaps a ``{% generation %}`` span, from each token's
character offsets in the text.

    >>> special_tokens_map({"bos_token": {"content": "<s>"}, "pad_token": None, "image_token": "<img>"})
    {'bos_token': '<s>', 'image_token': '<img>'}
"""
from __future__ import annotations

import difflib

from . import control

# The special tokens transformers names, in its order; other "*_token" keys follow as model-specific ones.
_NAMED_SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_DEFAULT_MODEL_INPUTS = ("input_ids", "attention_mask")


def _token_text(value) -> str | None:
    if isinstance(value, dict):  # an AddedToken as tokenizer_config.json stores it
        value = value.get("content")
    return value if isinstance(value, str) else None


def special_tokens_map(config: dict) -> dict[str, str]:
    """The special-token variables transformers passes every template (its ``special_tokens_map``)."""
    tokens = {name: _token_text(config.get(name)) for name in _NAMED_SPECIAL_TOKENS}
    for name, value in config.items():
        if name.endswith("_token") and name not in tokens and _token_text(value) is not None:
            tokens[name] = _token_text(value)
    extra = config.get("extra_special_tokens")
    if isinstance(extra, dict):  # named model-specific tokens
        tokens.update({name: _token_text(value) for name, value in extra.items()})
    return {name: text for name, text in tokens.items() if text is not None}


def encode_chat(tokenizer, text: str, sanitized: bool, as_dict: bool, in_batch: bool, generation_spans=None):
    """The ids of one rendered chat, or the dict apply_chat_template returns for it."""
    ids = control.encode_marked(tokenizer, text) if sanitized else tokenizer.encode(text, add_special_tokens=False)
    if not as_dict:
        return ids
    inputs = tokenizer.config.get("model_input_names") or _DEFAULT_MODEL_INPUTS
    encoded = {"input_ids": ids}
    if "token_type_ids" in inputs and not sanitized:  # transformers' pad() after sanitizing adds none
        encoded["token_type_ids"] = [0] * len(ids)
    # transformers pads sanitized ids, and its pad() returns a lone empty sequence without a mask.
    if "attention_mask" in inputs and (ids or in_batch or not sanitized):
        encoded["attention_mask"] = [1] * len(ids)
    if generation_spans is not None:
        encoded["assistant_masks"] = assistant_mask(token_offsets(tokenizer, text, ids), generation_spans)
    return encoded


def merge_batch(encoded: list[dict]) -> dict:
    """A batch's dicts as one dict of lists, as BatchEncoding holds a batch."""
    return {key: [one[key] for one in encoded] for key in encoded[0]}


def assistant_mask(offsets: list[tuple[int, int]], spans: list[tuple[int, int]]) -> list[int]:
    """1 for each token overlapping a span (both in text order), else 0.

    >>> assistant_mask([(0, 2), (2, 4), (4, 6)], [(3, 4)])
    [0, 1, 0]
    """
    mask = [0] * len(offsets)
    span = 0
    for index, (start, end) in enumerate(offsets):
        while span < len(spans) and start >= spans[span][1]:
            span += 1
        if span == len(spans):
            break
        if end > spans[span][0]:
            mask[index] = 1
    return mask


def token_offsets(tokenizer, text: str, ids: list[int]) -> list[tuple[int, int]]:
    """Each token's (start, end) character offsets in ``text``.

    From the bytes each token spells: exact when they spell the text (byte-level tokenizers); where a
    normalizer changed it (SentencePiece's prefix space, NFC), spelled bytes are aligned to the text's.
    A token cutting a character in two covers the whole character, as in tokenizers.
    """
    pieces = [tokenizer.token_bytes(token_id) for token_id in ids]
    spelled = b"".join(pieces)
    original = text.encode("utf-8")
    to_original = list(range(len(spelled) + 1)) if spelled == original else _align(spelled, original)
    char_at = [0] * (len(original) + 1)  # the character each byte of the text belongs to
    position = 0
    for index, char in enumerate(text):
        width = len(char.encode("utf-8"))
        char_at[position:position + width] = [index] * width
        position += width
    char_at[len(original)] = len(text)
    offsets, done = [], 0
    for piece in pieces:
        start = char_at[to_original[done]]
        end = char_at[to_original[done + len(piece) - 1]] + 1 if piece else start
        offsets.append((start, max(start, min(end, len(text)))))
        done += len(piece)
    return offsets


def _align(spelled: bytes, original: bytes) -> list[int]:
    """For each position in ``spelled``, the position in ``original`` it corresponds to."""
    mapping = [0] * (len(spelled) + 1)
    matcher = difflib.SequenceMatcher(None, spelled, original, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):
            # Equal runs map byte for byte; replaced or inserted bytes map into the text they replace.
            mapping[i] = j1 + (i - i1) if tag == "equal" else min(j1 + (i - i1), max(j1, j2 - 1))
    mapping[len(spelled)] = len(original)
    return mapping
