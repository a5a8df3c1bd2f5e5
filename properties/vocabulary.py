"""A survey of one family's vocabulary, read from the oracle: its ids grouped by what they are.

The property tests draw their inputs from it and the runner's case builders (textbound.checks) build
theirs from it, so both meet the same kinds of ids: specials, byte-fallback tokens, the stray bytes
of a character that decode alone to U+FFFD. What needs every id decoded alone is found on first use
only, since the property tests of the tokenizer never ask for it:

    >>> survey = VocabularySurvey(TokenizersOracle.from_dir(gpt2_folder))  # the embedded gpt2 family
    >>> survey.spelled("€")  # one byte-level token per UTF-8 byte
    [158, 224, 105]
"""
from __future__ import annotations

import re
from functools import cached_property

from hypothesis import strategies as st
from tokenizers.pre_tokenizers import ByteLevel

from .strategies import id_sequences, text_with_specials

REPLACEMENT_CHARACTER = "\ufffd"
BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
WITNESS_SAMPLE = 16  # ids of each kind appended to show that a text can still change
BYTE_LEVEL = ByteLevel(add_prefix_space=False, use_regex=False)


class VocabularySurvey:
    """Ids grouped by what they are and what they decode to alone, for one oracle (a
    ``TokenizersOracle``). Not a dataclass: Hypothesis prints a failing example's arguments, and a
    dataclass would be printed with every id of the vocabulary."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.vocab: dict[str, int] = oracle.vocab()
        self.ids: list[int] = sorted(self.vocab.values())
        self.special_ids: list[int] = sorted(oracle.special_ids)

    def __repr__(self) -> str:
        return f"<vocabulary survey of {len(self.ids)} ids>"

    @cached_property
    def added_tokens(self) -> tuple[str, ...]:
        """The contents of every added token, special or not."""
        return tuple(sorted({token.content for token in self.oracle.tokenizer.get_added_tokens_decoder().values()}))

    @cached_property
    def byte_ids(self) -> list[int]:
        """The ids of byte-fallback tokens ``<0xNN>`` (either case of hex digit), valid or not alone."""
        return sorted(i for token, i in self.vocab.items() if BYTE_TOKEN.fullmatch(token))

    @cached_property
    def byte_fallback_ids(self) -> dict[int, int]:
        """Byte value -> id of its ``<0xNN>`` token, for the bytes the vocabulary has one for."""
        return {value: self.vocab[token] for value in range(256) if (token := f"<0x{value:02X}>") in self.vocab}

    @cached_property
    def _alone(self) -> dict[int, str]:
        """Each id decoded alone."""
        return dict(zip(self.ids, self.oracle.decode_batch([[i] for i in self.ids])))

    @cached_property
    def broken_ids(self) -> list[int]:
        """Ids that decode alone to U+FFFD: stray bytes of a character."""
        return [i for i in self.ids if self._alone[i] == REPLACEMENT_CHARACTER]

    @cached_property
    def witnesses(self) -> list[int]:
        """A sample of broken ids and of ids decoding alone to one ASCII letter."""
        special = set(self.special_ids)
        letters = [i for i in self.ids if len(self._alone[i]) == 1 and self._alone[i].isascii()
                   and self._alone[i].isalpha() and i not in special]
        return _spread(self.broken_ids, WITNESS_SAMPLE) + _spread(letters, WITNESS_SAMPLE)

    def spelled(self, char: str) -> list[int]:
        """Ids spelling ``char`` one UTF-8 byte per token (byte fallback or byte level); [] if none can."""
        data = char.encode("utf-8")
        for tokens in ([f"<0x{byte:02X}>" for byte in data], BYTE_LEVEL.pre_tokenize_str(char)[0][0]):
            if len(tokens) == len(data) and all(token in self.vocab for token in tokens):
                return [self.vocab[token] for token in tokens]
        return []

    def texts(self) -> st.SearchStrategy[str]:
        """Text around and near the added tokens (``strategies.text_with_specials``)."""
        return text_with_specials(self.added_tokens)

    def id_sequences(self) -> st.SearchStrategy[list[int]]:
        """Sequences of known ids, specials and byte-fallback runs (``strategies.id_sequences``)."""
        return id_sequences(self.ids, self.special_ids, self.byte_fallback_ids)


def _spread(items: list[int], count: int) -> list[int]:
    return items[:: max(1, len(items) // count)][:count]
