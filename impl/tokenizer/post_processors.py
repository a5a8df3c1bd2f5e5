"""Post-processors: the special tokens added around encoded ids, one class per tokenizer.json
``post_processor`` type.

Only ids matter here (no offsets, type ids or masks). As in tokenizers v0.23 (src/processors/),
each processor maps a list of encodings to a new list (``process_encodings``), so that a Sequence
can feed one processor's output into the next; ``process`` runs that on one input sequence and
concatenates the result. Special-token ids come from the file itself, never from the vocabulary.
"""
from __future__ import annotations

from typing import NamedTuple

from ..errors import TokenizerFileError
from .fields import (
    ANY_TYPE, NAMED, ByteLevelOptions, build_component, build_components, child, field, u32_value,
)

Encodings = list[list[int]]


class PostProcessorPanic(ValueError):
    """Input on which tokenizers' post-processor panics instead of returning an encoding."""


class PostProcessor:
    def process(self, ids: list[int], add_special_tokens: bool) -> list[int]:
        """The ids of one input sequence with this processor's special tokens added."""
        encodings = self.process_encodings([ids], add_special_tokens)
        if len(encodings) == 1:  # no copy of a long text's ids when nothing was added around them
            return encodings[0]
        return [token_id for encoding in encodings for token_id in encoding]

    def process_encodings(self, encodings: Encodings, add_special_tokens: bool) -> Encodings:
        raise NotImplementedError


class ByteLevel(PostProcessor):
    """Only trims offsets in tokenizers; ids pass through."""

    def process_encodings(self, encodings: Encodings, add_special_tokens: bool) -> Encodings:
        return encodings

    @classmethod
    def from_json(cls, node: dict, where: str) -> "ByteLevel":
        ByteLevelOptions.from_json(node, where)  # read, and required, though ids pass through
        return cls()


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]``, and ``B [SEP]`` for each later encoding."""

    def __init__(self, sep: int, cls: int):
        self.sep = sep
        self.cls = cls

    def process_encodings(self, encodings: Encodings, add_special_tokens: bool) -> Encodings:
        if not add_special_tokens:
            return encodings
        return [[self.cls, *ids, self.sep] if i == 0 else self._later(ids) for i, ids in enumerate(encodings)]

    def _later(self, ids: list[int]) -> list[int]:
        return [*ids, self.sep]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "BertProcessing":
        return cls(_token_and_id(node, "sep", where), _token_and_id(node, "cls", where))


class RobertaProcessing(BertProcessing):
    """``<s> A </s>``, and ``</s> B </s>`` for each later encoding."""

    def _later(self, ids: list[int]) -> list[int]:
        return [self.sep, *ids, self.sep]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "RobertaProcessing":
        # Only its options tell it from BertProcessing: they only move offsets.
        field(node, "trim_offsets", where, bool)
        field(node, "add_prefix_space", where, bool)
        return super().from_json(node, where)


class Input(NamedTuple):
    """A template piece standing for an input sequence: 0 for A, 1 for B."""
    index: int


class Special(NamedTuple):
    """A template piece standing for a special token's ids."""
    ids: tuple[int, ...]


Template = list[Input | Special]


class TemplateProcessing(PostProcessor):
    """Templates such as ``<s> $A``: special tokens and input sequences in the order given.

    Each piece becomes its own encoding, so an input named twice is repeated and one not named
    is dropped, even when special tokens are not added.
    """

    def __init__(self, single: Template, pair: Template):
        self.templates = {1: single, 2: pair}

    def process_encodings(self, encodings: Encodings, add_special_tokens: bool) -> Encodings:
        template = self.templates.get(len(encodings))
        if template is None:
            raise PostProcessorPanic(f"TemplateProcessing: got {len(encodings)} encodings, expected 1 or 2")
        return [
            encodings[piece.index] if isinstance(piece, Input) else list(piece.ids)
            for piece in template
            if isinstance(piece, Input) or add_special_tokens
        ]

    @classmethod
    def from_json(cls, node: dict, where: str) -> "TemplateProcessing":
        special_tokens = _special_tokens(field(node, "special_tokens", where, dict), child(where, "special_tokens"))
        single = _template(field(node, "single", where, list), child(where, "single"), special_tokens)
        pair = _template(field(node, "pair", where, list), child(where, "pair"), special_tokens)
        if Input(1) in single:
            raise TokenizerFileError(child(where, "single"), "uses sequence B, which a single input does not have")
        return cls(single, pair)


def _special_tokens(node: dict, where: str) -> dict[str, tuple[int, ...]]:
    """The ids of each entry of ``special_tokens``, by the name templates use for it."""
    ids_by_name = {}
    for name, entry in node.items():
        entry_where = child(where, name)
        field(entry, "id", entry_where, str)
        field(entry, "tokens", entry_where, list)
        ids = field(entry, "ids", entry_where, list)
        ids_by_name[name] = tuple(u32_value(value, child(child(entry_where, "ids"), i)) for i, value in enumerate(ids))
    return ids_by_name


def _template(pieces: list, where: str, special_tokens: dict[str, tuple[int, ...]]) -> Template:
    template: Template = []
    for i, piece in enumerate(pieces):
        piece_where = child(where, i)
        if not isinstance(piece, dict) or len(piece) != 1 or not piece.keys() <= {"Sequence", "SpecialToken"}:
            raise TokenizerFileError(piece_where, 'expected {"Sequence": ...} or {"SpecialToken": ...}')
        (kind, body), = piece.items()
        body_where = child(piece_where, kind)
        name = field(body, "id", body_where, str)
        u32_value(field(body, "type_id", body_where), child(body_where, "type_id"))
        if kind == "Sequence":
            if name not in ("A", "B"):
                raise TokenizerFileError(child(body_where, "id"), f'expected "A" or "B", found {name!r}')
            template.append(Input("AB".index(name)))
        elif name in special_tokens:
            template.append(Special(special_tokens[name]))
        else:
            raise TokenizerFileError(child(body_where, "id"), f"special token {name!r} is not in special_tokens")
    return template


class Sequence(PostProcessor):
    """Processors applied in order, each to the previous one's encodings."""

    def __init__(self, processors: list[PostProcessor]):
        self.processors = processors

    def process_encodings(self, encodings: Encodings, add_special_tokens: bool) -> Encodings:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings

    @classmethod
    def from_json(cls, node: dict, where: str) -> "Sequence":
        return cls(build_components(node, "processors", where, "post-processor", {}, POST_PROCESSORS))


# The oracle reads a post-processor by shape alone, trying these in order: Roberta, Bert and
# Template whatever their "type" says (a BertProcessing with Roberta's options is a Roberta one,
# a node without a "type" is one of them), ByteLevel and Sequence only when named.
POST_PROCESSORS = (
    ("RobertaProcessing", RobertaProcessing, ANY_TYPE),
    ("BertProcessing", BertProcessing, ANY_TYPE),
    ("ByteLevel", ByteLevel, NAMED),
    ("TemplateProcessing", TemplateProcessing, ANY_TYPE),
    ("Sequence", Sequence, NAMED),
)


def post_processor_from_json(node: dict | None, where: str) -> PostProcessor | None:
    """The post-processor a tokenizer.json ``post_processor`` node describes; None when it is null.

    Like tokenizers, the processors use the ids written in the node, even where the vocabulary
    disagrees.
    """
    return None if node is None else build_component(node, where, "post-processor", {}, POST_PROCESSORS)



def _token_and_id(node: dict, key: str, where: str) -> int:
    """The id of a ``[token, id]`` pair such as Bert's ``sep``."""
    pair = field(node, key, where, list)
    if len(pair) != 2 or not isinstance(pair[0], str):
        raise TokenizerFileError(child(where, key), "expected [token, id]")
    return u32_value(pair[1], child(child(where, key), 1))
