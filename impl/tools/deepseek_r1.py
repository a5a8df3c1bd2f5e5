"""deepseek_r1: DeepSeek V3 and R1 — a call type, the name, and the arguments in a json fence.

    <think>reasoning</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

-> reasoning "reasoning", content "Sure.", get_weather with ``{"city": "Paris"}`` as written. The
body is exactly ``[function]<｜tool▁sep｜>NAME\\n```[json]\\n`` + a JSON object + ``\\n````` (the shape
the template writes, and transformers' response template reads); anything else makes the block content.
"""
from __future__ import annotations

import regex

from .deepseek import SEPARATOR, DeepSeekFormat

_SEP = regex.escape(SEPARATOR)
_BODY = regex.compile(rf"(?:function)?{_SEP}(?P<name>[^\n]*)\n```(?:json)?\n(?P<arguments>.*)\n```", regex.DOTALL)
# As _BODY reads it, up to the arguments object.
_HEADER = regex.compile(rf"(?:function)?{_SEP}(?P<name>[^\n]*)\n```(?:json)?\n[ \t\r\n]*(?=\{{)")


class DeepSeekR1(DeepSeekFormat):
    name = "deepseek_r1"
    header = _HEADER

    def read_call(self, body):
        match = _BODY.fullmatch(body)
        return match and (match["name"], match["arguments"])
