"""The DeepSeek tool-call tokens, shared by deepseek_r1 and deepseek_v31.

Calls sit between ``<｜tool▁call▁begin｜>`` and ``<｜tool▁call▁end｜>``, usually inside a
``<｜tool▁calls▁begin｜>``...``<｜tool▁calls▁end｜>`` section; the section tags are pure syntax and are
dropped wherever they appear (so an empty section vanishes). The two formats differ in the call
body only: each reads the call's header with ``header`` (groups ``name``), and a streamed call is
announced once its header is read and its arguments object has begun.
"""
from __future__ import annotations

from .arguments import arguments_from_json
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity

CALL_BEGIN, CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"
CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
SEPARATOR = "<｜tool▁sep｜>"


class DeepSeekFormat(TaggedFormat):
    call_tags = (CALL_BEGIN,)
    close_tag = CALL_END
    separator_tags = (CALLS_BEGIN, CALLS_END)
    header = None  # the call's text up to its arguments object, the name in group ``name``

    def call_reader(self, opener, parameters):
        return JsonCallReader(self.header, header_identity)

    def parse_block(self, opener, block, parameters):
        head, separator, tail = block[:-len(CALL_END)].partition(SEPARATOR)
        read = self.read_call(head, tail) if separator else None
        if read is None:
            return None
        name, raw_arguments = read
        arguments = arguments_from_json(raw_arguments)
        if not name or arguments is None:
            return None
        return [ParsedCall(name, arguments)]

    def read_call(self, head: str, tail: str) -> tuple[str, str] | None:
        """(name, raw JSON arguments) from the text before and after ``<｜tool▁sep｜>``."""
        raise NotImplementedError
