"""deepseek_v31: DeepSeek V3.1 — the name, ``<｜tool▁sep｜>``, then the JSON arguments.

The template opens ``<think>`` in the prompt when thinking, so a thinking stream starts with
``starts_in_reasoning=True``::

    reasoning</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

-> reasoning "reasoning", content "Sure.", get_weather with ``{"city": "Paris"}`` as written. The name
is the text before the first ``<｜tool▁sep｜>``; arguments that are not a JSON object make the block content.
"""
from __future__ import annotations

import regex

from .deepseek import SEPARATOR, DeepSeekFormat


class DeepSeekV31(DeepSeekFormat):
    name = "deepseek_v31"
    header = regex.compile(r"(?P<name>[^\n<]*)" + regex.escape(SEPARATOR) + r"[ \t\r\n]*(?=\{)")

    def read_call(self, body):
        name, separator, arguments = body.partition(SEPARATOR)
        return (name, arguments) if separator else None
