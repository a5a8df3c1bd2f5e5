"""What a command prints when it cannot go on is one line, also where it quotes another library's
message that spans several (huggingface_hub's advice to check the connection, a parser's context)."""
from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\s*\n\s*")


def one_line(message: object) -> str:
    """``message`` with each line break, and the whitespace around it, made one space:
    ``one_line("cannot download\\n  Check your connection.") == "cannot download Check your connection."``."""
    return LINE_BREAK.sub(" ", str(message).strip())
