"""deepseek_r1: DeepSeek V3 and R1 — a call type, the name, and the arguments in a json fence.

    <think>reasoning</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

-> reasoning "reasoning", content "Sure.", get_weather with ``{"city": "Paris"}`` as written. The
type before ``<｜tool▁sep｜>`` must be a word (``function``) or nothing; the fence may be missing. A
body that is not that shape, or arguments that are not a JSON object, make the block content.
"""
from __future__ import annotations

import regex

from .deepseek import SEPARATOR, DeepSeekFormat

# As _BODY reads it, up to the arguments object.
_HEADER = regex.compile(r"\s*\w*" + regex.escape(SEPARATOR)
                        + r"(?P<name>[^\n]*?)[ \t]*\n(?:\s*```(?:json)?[ \t]*\n)?\s*(?=\{)")
_BODY = regex.compile(r"([^\n]*?)[ \t]*\n(?:\s*```(?:json)?[ \t]*\n(.*)\n\s*```|(.*))\s*", regex.DOTALL)


class DeepSeekR1(DeepSeekFormat):
    name = "deepseek_r1"
    header = _HEADER

    def read_call(self, head, tail):
        body = _BODY.fullmatch(tail)
        if not regex.fullmatch(r"\s*\w*", head) or body is None:
            return None
        return body[1].strip(), body[2] if body[2] is not None else body[3]
