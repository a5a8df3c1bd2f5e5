"""Errors raised by impl, each naming what is wrong and where (impl.tokenizer.fields reads
tokenizer.json and raises them).

A tokenizer.json fault names the file and the JSON path of the faulty node
(``tokenizer.json: $.pre_tokenizer.pretokenizers[1].behavior``), so a user can open the file and
go straight to it.
"""
from __future__ import annotations


class TokenizerFileError(ValueError):
    """A tokenizer.json that is corrupt or uses a component impl does not implement; ``where`` is the
    file and JSON path.

    >>> from textbound.impl import Tokenizer
    >>> Tokenizer({"version": "1.0", "model": {"type": "BPE", "vocab": [], "merges": []}})
    Traceback (most recent call last):
    textbound.impl.errors.TokenizerFileError: tokenizer.json: $.model.vocab: expected dict, found list
    """

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where


class UnsupportedError(TokenizerFileError):
    """A file the oracle reads that impl refuses (random dropout, one id for two tokens).

    Never a reason to try another shape of the node: the oracle took this one.
    """
