"""SentencePiece's normalization rules as Precompiled charsmaps, which a tokenizer spec names
instead of spelling: ``{"type": "Precompiled", "precompiled_charsmap": {"sentencepiece_rule":
"nmt_nfkc"}}`` (see tokenizer_specs/ in the README). Both the families trained from specs and the
fuzzer that draws specs read a normalizer through ``resolve_charsmaps``.

    >>> node = resolve_charsmaps({"type": "Precompiled", "precompiled_charsmap": {"sentencepiece_rule": "nmt_nfkc"}})
    >>> base64.b64decode(node["precompiled_charsmap"]) == sentencepiece_charsmap("nmt_nfkc")
    True
"""
from __future__ import annotations

import base64
import io
from functools import cache
from typing import Any


def resolve_charsmaps(node: Any) -> Any:
    """``node`` with each ``{"sentencepiece_rule": name}`` charsmap compiled and base64-encoded."""
    if isinstance(node, list):
        return [resolve_charsmaps(item) for item in node]
    if not isinstance(node, dict):
        return node
    charsmap = node.get("precompiled_charsmap")
    if node.get("type") == "Precompiled" and isinstance(charsmap, dict):
        return {**node, "precompiled_charsmap": base64.b64encode(sentencepiece_charsmap(
            charsmap["sentencepiece_rule"])).decode("ascii")}
    return {key: resolve_charsmaps(value) for key, value in node.items()}


@cache
def sentencepiece_charsmap(rule: str) -> bytes:
    """SentencePiece's compiled charsmap of a built-in normalization rule ("nmt_nfkc", "nfkc_cf"...).

    The `sentencepiece` package compiles it only into a trained model, so this trains a tiny one
    and reads ``normalizer_spec.precompiled_charsmap`` out of the model's protobuf.
    """
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["ab"] * 10), model_writer=model, vocab_size=8, normalization_rule_name=rule,
        minloglevel=2, hard_vocab_limit=False)
    charsmap = _protobuf_field(_protobuf_field(model.getvalue(), NORMALIZER_SPEC_FIELD), PRECOMPILED_CHARSMAP_FIELD)
    if not charsmap:
        raise ValueError(f"sentencepiece rule {rule!r} compiles to no charsmap")
    return charsmap


# Field numbers in sentencepiece_model.proto: ModelProto.normalizer_spec, NormalizerSpec.precompiled_charsmap.
NORMALIZER_SPEC_FIELD = 3
PRECOMPILED_CHARSMAP_FIELD = 2


def _protobuf_field(message: bytes, number: int) -> bytes:
    """The bytes of length-delimited field ``number`` in a protobuf message (b"" when absent)."""
    position = 0

    def varint() -> int:
        nonlocal position
        value = shift = 0
        while True:
            byte = message[position]
            position += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while position < len(message):
        key = varint()
        wire_type = key & 7
        if wire_type == 0:
            varint()
        elif wire_type in (1, 5):  # fixed 64 and 32 bits
            position += 8 if wire_type == 1 else 4
        elif wire_type == 2:
            length = varint()
            if key >> 3 == number:
                return message[position:position + length]
            position += length
        else:
            raise ValueError(f"unexpected protobuf wire type {wire_type}")
    return b""
