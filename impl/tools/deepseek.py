"""The DeepSeek tool-call tokens, shared by deepseek_r1 and deepseek_v31.

Calls sit between ``<｜tool▁call▁begin｜>`` and ``<｜tool▁call▁end｜>`` (the first close tag counts:
they are special tokens), usually inside a ``<｜tool▁calls▁begin｜>``...``<｜tool▁calls▁end｜>``
section. The section tags are syntax next to a call (the opening one before a call tag, the closing
one after a call, whitespace between) and content anywhere else. The two formats differ in the call
body only: each reads (name, raw arguments) with ``read_call``, and a streamed call is announced once
its ``header`` (group ``name``) is read and its arguments object has begun.
"""
from __future__ import annotations

from .arguments import object_arguments, text_name
from .engine import TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity

CALL_BEGIN, CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"
CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
SEPARATOR = "<｜tool▁sep｜>"


class DeepSeekFormat(TaggedFormat):
    call_tags = (CALL_BEGIN,)
    close_tag = CALL_END
    section_tags = ((CALLS_BEGIN,), (CALLS_END,))
    header = None  # the call's text up to its arguments object, the name in group ``name``

    def call_reader(self, opener, parameters):
        return JsonCallReader(self.header, header_identity)

    def parse_block(self, opener, body, parameters):
        read = self.read_call(body)
        name = read and text_name(read[0])
        arguments = object_arguments(read[1]) if name else None
        return None if arguments is None else [ParsedCall(name, arguments)]

    def read_call(self, body: str) -> tuple[str, str] | None:
        """(name as written, raw JSON arguments) from a call's body, or None if it is not that shape."""
        raise NotImplementedError
