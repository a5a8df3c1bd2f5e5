"""The shared streaming core: a reasoning splitter and a content scanner that hands call blocks to
a format's parser.

A format (one module each, see ``TaggedFormat``) names its tags and knows how to find the end of a
call block and read the calls in it. ``TaggedStream`` does the rest, the same for every format:

- Reasoning: the reasoning open tag counts only at the start of the output (after whitespace), or
  the prompt opened it (``starts_in_reasoning``); the first close tag ends reasoning for good.
  Everything in between is reasoning, tags of calls included.
- Content: text is released as it arrives, except the longest tail that may still grow into a tag.
  A call tag opens a block, whose text is held until the format finds its end. Meanwhile the
  format's call reader (partial.py) announces each call as soon as its name is read and its
  arguments have begun (first delta: id, type, name), then passes the arguments on as they grow
  (``BlockCalls``). At the block's end its complete parse decides: the calls get the rest of their
  arguments (calls not announced yet come whole), or, if the format cannot read the block, its text
  is content exactly as written and the calls announced from it are closed and flagged
  ``"malformed call: ..."``. A block still open when the stream ends is malformed too (unless the
  format accepts it, as harmony's calls whose ``<|call|>`` the engine strips).
- Separators: whitespace (and a format's separator characters) between two pieces of syntax (the
  start, the end of reasoning, a call, a section tag, the end) is template glue and is dropped;
  whitespace before text is content. So that is held until the next non-space character says which.

Worked example (hermes), fed in three pieces::

    feed("<think>hm</th")    -> [{"reasoning_content": "hm"}]                 # "</th" is held
    feed("ink>\\nSure <tool_") -> [{"content": "\\nSure "}]                     # "<tool_" held
    feed('call>{"name": "f", "arguments": {"a": ')
      -> [{"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                           "function": {"name": "f", "arguments": ""}}]},
          {"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}]
    feed('1}}</tool_call>', final=True)
      -> [{"tool_calls": [{"index": 0, "function": {"arguments": '"a": 1}'}}]}]
"""
from __future__ import annotations

from .arguments import find_outside_spans, tool_parameters
from .message import BlockCalls, DeltaSink, ParsedCall
from .scanner import held_length, next_tag

REJECT = -1  # block_end's answer when what follows an opener cannot be a call block
_WHITESPACE = " \t\r\n"


class TaggedFormat:
    """What one output format is made of. Subclasses set the tags and implement ``parse_block``."""

    name = ""
    reasoning_tags: tuple[str, str] | None = ("<think>", "</think>")
    call_tags: tuple[str, ...] = ()  # each opens a call block
    close_tag = ""  # ends a call block, for the default block_end
    separator_tags: tuple[str, ...] = ()  # pure syntax between calls (section begin/end): dropped
    separator_chars = ""  # characters that may sit between calls besides whitespace
    accepts_unterminated = False  # a block open at the end of the stream is still read
    value_span: tuple[str, str] | None = None  # XML value tags, inside which the close tag does not count

    def bare_block(self, text: str) -> bool:
        """Whether ``text`` (at a boundary, non-empty) starts a block that has no opening tag."""
        return False

    def block_end(self, opener: str, body: str, final: bool, memo: dict) -> int | None:
        """Where the block's text ends (past its closing tag) in ``body``, None while unknown,
        ``REJECT`` if it cannot be a block (then the opener is content text). ``body`` grows between
        calls for one block; ``memo`` (empty when the block opens) keeps a scan's state across them."""
        if self.value_span is None:
            position = body.find(self.close_tag)
        else:
            position = find_outside_spans(body, self.close_tag, *self.value_span)
        if position >= 0:
            return position + len(self.close_tag)
        return len(body) if final and self.accepts_unterminated else None

    def call_reader(self, opener: str, parameters: dict[str, dict] | None):
        """A reader (partial.py) of the calls of a block still being written, or None: then the calls
        come out when the block ends."""
        return None

    @classmethod
    def stream(cls, tools=None, reasoning=True, starts_in_reasoning=False):
        """The state machine that parses one output in this format."""
        return TaggedStream(cls(), tools, reasoning, starts_in_reasoning)

    def parse_block(self, opener: str, block: str, parameters: dict[str, dict] | None) -> list[ParsedCall] | None:
        """The calls in a block (its text up to and including the closing tag), or None if the block
        is malformed. ``parameters`` maps tool names to their properties' schemas (None: no tools)."""
        raise NotImplementedError


START, REASONING, CONTENT, BLOCK = "start", "reasoning", "content", "block"


class TaggedStream:
    """The state machine that turns fed text into deltas for one ``TaggedFormat``."""

    def __init__(self, fmt: TaggedFormat, tools=None, reasoning=True, starts_in_reasoning=False):
        self.format = fmt
        self.parameters = tool_parameters(tools)
        self.reasoning_tags = fmt.reasoning_tags if reasoning else None
        self.content_tags = fmt.call_tags + fmt.separator_tags
        self.mode = CONTENT
        if self.reasoning_tags:
            self.mode = REASONING if starts_in_reasoning else START
        self.buffer = ""
        self.pending = ""  # separator text held at a boundary
        self.at_boundary = True
        self.opener = ""
        self.block_pending = ""  # the separator text before an open block, restored if it is malformed
        self.block_memo: dict = {}
        self.reader = None  # the open block's call reader
        self.sink = DeltaSink()
        self.block_calls = BlockCalls(self.sink, self.parameters)
        self.finished = False

    def feed(self, text: str, final: bool = False) -> list[dict]:
        if self.finished:
            raise RuntimeError("feed() after the stream was finished with final=True")
        self.buffer += text
        step = {START: self._start, REASONING: self._reasoning, CONTENT: self._content, BLOCK: self._block}
        while step[self.mode](final):
            pass
        if final:
            self.finished = True
        return self.sink.take()

    def _start(self, final: bool) -> bool:
        opening = self.reasoning_tags[0]
        rest = self.buffer.lstrip(_WHITESPACE)
        if rest.startswith(opening):
            self.buffer = rest[len(opening):]
            self.mode = REASONING
            return True
        if not final and opening.startswith(rest):
            return False  # only whitespace and perhaps the start of the tag so far
        self.mode = CONTENT
        return True

    def _reasoning(self, final: bool) -> bool:
        text, tag, self.buffer = next_tag(self.buffer, self.reasoning_tags[1:], final)
        self.sink.reasoning(text)
        if tag is None:
            return False
        self.mode, self.at_boundary = CONTENT, True
        return True

    def _content(self, final: bool) -> bool:
        if self.at_boundary:
            separators = _WHITESPACE + self.format.separator_chars
            rest = self.buffer.lstrip(separators)
            self.pending += self.buffer[:len(self.buffer) - len(rest)]
            self.buffer = rest
            if not rest:
                return False
            if self.format.bare_block(rest):
                self._open_block("")
                return True
        text, tag, self.buffer = next_tag(self.buffer, self.content_tags, final)
        self._text(text)
        if tag is None:
            return False
        if tag in self.format.call_tags:
            self._open_block(tag)
        else:
            self.pending, self.at_boundary = "", True
        return True

    def _block(self, final: bool) -> bool:
        end = self.format.block_end(self.opener, self.buffer, final, self.block_memo)
        if end == REJECT:  # not a block after all: its opener is text, and what follows is scanned again
            self.sink.content(self.block_pending + self.opener)
            self.mode, self.at_boundary = CONTENT, False
            return True
        if end is None:
            close = self.format.close_tag
            held = held_length(self.buffer, (close,)) if close and not final else 0  # may be the close tag
            self._read_calls(self.buffer, len(self.buffer) - held)
            if final:
                self.block_calls.finish(None)
                self._malformed(self.buffer)
                self.buffer = ""
            return False
        block, self.buffer = self.buffer[:end], self.buffer[end:]
        self._read_calls(block, end - len(self.format.close_tag) if block.endswith(self.format.close_tag) else end)
        if not self.block_calls.finish(self.format.parse_block(self.opener, block, self.parameters)):
            self._malformed(block)
            return True
        self.mode, self.at_boundary = CONTENT, True
        return True

    def _read_calls(self, body: str, limit: int) -> None:
        """Passes on what the call reader can read of the open block up to ``limit`` (past it may be
        the start of the closing tag)."""
        if self.reader is not None:
            self.block_calls.update(self.reader.read(body, limit))

    def _open_block(self, opener: str) -> None:
        self.block_pending = self.pending if self.at_boundary else ""
        self.pending, self.opener, self.mode, self.block_memo = "", opener, BLOCK, {}
        self.reader = self.format.call_reader(opener, self.parameters)

    def _malformed(self, block: str) -> None:
        self.sink.content(self.block_pending + self.opener + block)
        self.mode, self.at_boundary = CONTENT, False

    def _text(self, text: str) -> None:
        if text:
            self.sink.content(self.pending + text)
            self.pending, self.at_boundary = "", False
