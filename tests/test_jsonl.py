"""A record holding a character str.splitlines breaks at stays one line of divergences.jsonl."""
import json

import pytest

from textbound.files import jsonl_line

BREAKERS = ["\u0085", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\r", "\n"]


@pytest.mark.parametrize("char", BREAKERS, ids=[f"U+{ord(c):04X}" for c in BREAKERS])
def test_a_line_breaking_character_keeps_the_record_on_one_line(char):
    record = {"text": f"a{char}b", "ids": [1, 2]}
    (line,) = (jsonl_line(record) + "\n").splitlines()
    assert json.loads(line) == record
