"""A faulty tokenizer.json node: the oracle refuses it too, and impl names the node's JSON path."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from impl import TokenizerFileError


def assert_refused_by_both(oracle_build: Callable[[], object], impl_build: Callable[[], object],
                           path: str, message: str = "") -> None:
    with pytest.raises(Exception):
        oracle_build()  # the fault is real: tokenizers refuses the node too
    with pytest.raises(TokenizerFileError) as raised:
        impl_build()
    assert raised.value.where == path
    assert message in str(raised.value)
