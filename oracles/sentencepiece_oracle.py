"""The `sentencepiece` library as a second oracle, wherever a family has a SentencePiece ``.model``:
the ``tokenizer.model`` in its folder, or the file a Mistral family was converted from
(oracles/mistral_source.py).

It answers the same two questions as the `tokenizers` oracle, without special tokens: the ids of
a text (``encode``: no BOS or EOS) and the text of ids (``decode``). Where the two disagree, that
is an oracle disagreement (oracles/disagreements.py), not an impl failure. SentencePiece never
matches a control piece in text, so ``"[INST]"`` encodes as the letters ``[``, ``INST``, ``]``,
where tokenizers matches the added token; and it decodes a control piece to nothing:

    >>> oracle = SentencePieceOracle.for_family(mistral_v3_folder)
    >>> oracle.encode("[INST] hi")      # tokenizers: [3, 29473, 12782]
    [1501, 17057, 29561, 12782]
    >>> oracle.decode([3, 12782])       # tokenizers: "[INST] hi"
    'hi'
"""
from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from . import require
from .mistral_source import SENTENCEPIECE, source_file

MODEL_FILE = "tokenizer.model"


class SentencePieceOracle:
    def __init__(self, model_file: str | Path):
        sentencepiece = require("sentencepiece")
        self.model_file = Path(model_file)
        self.processor = sentencepiece.SentencePieceProcessor(model_file=str(model_file))
        self.version = f"sentencepiece {version('sentencepiece')}"
        size = self.processor.get_piece_size()
        self.control_ids = frozenset(i for i in range(size) if self.processor.is_control(i))
        self.control_pieces = frozenset(self.processor.id_to_piece(i) for i in self.control_ids)

    @classmethod
    def for_family(cls, folder: str | Path) -> "SentencePieceOracle | None":
        """The oracle of the family in ``folder``, or None when it has no SentencePiece model."""
        local = Path(folder) / MODEL_FILE
        if local.is_file():
            return cls(local)
        source = source_file(folder, SENTENCEPIECE)
        return cls(source) if source is not None else None

    def encode(self, text: str) -> list[int]:
        return self.processor.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.processor.decode(ids)

    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()
