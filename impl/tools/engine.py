"""The shared streaming core: one state machine for every format whose calls sit in tagged blocks.

A format (one module each, see ``TaggedFormat``) names its tags and knows how to find the end of a
call block and read the calls in it. ``TaggedStream`` does the rest, the same for every format:

- Content is released as it arrives, verbatim, except the longest tail that may still grow into a
  tag (scanner.py), and the glue a format holds after a call (see below).
- Reasoning: the reasoning open tag opens a reasoning block wherever it stands in content (or the
  prompt opened one: ``starts_in_reasoning``, and then an open tag the output begins with, after
  whitespace, is syntax); the first close tag ends it. Everything in between is
  reasoning, tags of calls included, except where the format says a block its close tag never ends
  ends at a section opening tag (kimi_k2): from such a tag on, reasoning is held until the close tag
  (it was reasoning) or the end of the output (the section and what follows are read as content).
- Calls: a call tag opens a block, whose text is held until the format finds its end (its close
  tag, the end of its JSON, or the end of the stream). Meanwhile the format's call reader
  (partial.py) announces each call as soon as its name is read and its arguments have begun, then
  passes the arguments on as they grow (message.BlockCalls). At the block's end its complete parse
  decides: the calls get the rest of their arguments (calls not announced yet come whole), or, if
  the format cannot read the block, its text is content exactly as written and the calls announced
  from it are closed and flagged ``"malformed call: ..."``.
- Sections: a section opening tag is syntax only when a call tag follows it (after whitespace), a
  section closing tag only when it follows a call (after whitespace); so after either, whitespace is
  held until the next character says which. Anywhere else they are content.

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

from .arguments import tool_parameters
from .blank_runs import BlankRuns
from .json_prefix import JSON_WHITESPACE, JsonPrefix
from .message import BlockCalls, DeltaSink, ParsedCall
from .scanner import held_length, next_tag

REJECT = -1  # block_end's answer when what follows an opener cannot be a call block
WAIT, CONTENT_FOLLOWS = "wait", "content"  # glue's answers besides a length to drop or a block to open

START, CONTENT, REASONING, SECTION, BLOCK, AFTER_CALL = "start", "content", "reasoning", "section", "block", "after"
OPENED = "opened"  # the start of an output whose prompt opened reasoning: an opening tag there is syntax
BRACE = "{"  # an opener that is the first character of the call object it opens


def header_decided(required, body: str, final: bool, memo: dict):
    """Whether the text after an opener begins as the regex ``required`` asks (a block opens only then):
    True once it does (remembered in the block's ``memo``), None while it may still, ``REJECT`` if not."""
    if "header" not in memo:
        header = required.match(body, partial=True)
        if header is None or (header.partial and final):
            return REJECT
        if header.partial:
            return None
        memo["header"] = True
    return True


def brace_object_end(body: str, final: bool, memo: dict):
    """block_end of a block a brace opened (the brace is its opener, ``body`` what follows it): where its
    JSON object ends; while it is open, or if it never becomes valid JSON, the rest of the output."""
    end = memo.setdefault("scan", JsonPrefix(0)).run(BRACE + body)
    if end is None:
        return (len(body), len(body)) if final else None
    return end - 1, end - 1


class TaggedFormat:
    """What one output format is made of. Subclasses set the tags and implement ``parse_block``."""

    name = ""
    reasoning_tags: tuple[str, str] | None = ("<think>", "</think>")
    call_tags: tuple[str, ...] = ()  # each opens a call block
    close_tag = ""  # ends a call block, for the default block_end
    section_tags: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # (opening, closing) around calls
    bare_start = False  # a block may open without a tag at the start of the output (llama3_json)
    edge_whitespace = ""  # dropped at a content run's ends that touch a call or reasoning (blank_runs.py)
    reasoning_ends_at_section = False  # a reasoning block its close tag never ends ends at a section opening tag

    def block_end(self, opener: str, body: str, final: bool, memo: dict):
        """(end of the body, end of the block's text) in ``body``, None while unknown, ``REJECT`` if it
        cannot be a block (then the opener is content text). At the end of the stream (``final``) a
        block still open runs to the end. ``body`` grows between calls for one block; ``memo`` (empty
        when the block opens) keeps a scan's state across them."""
        position = body.find(self.close_tag, memo.get("searched", 0))  # the first close tag counts
        memo["searched"] = max(0, len(body) - len(self.close_tag) + 1)
        return self.found_close(body, position if position >= 0 else None, final)

    def found_close(self, body: str, position: int | None, final: bool):
        """block_end's answer once the close tag was looked for: found at ``position``, or not (None)."""
        if position is not None:
            return position, position + len(self.close_tag)
        return (len(body), len(body)) if final else None

    def readable(self, opener: str, body: str) -> int:
        """How much of an open block's body its call reader may read: all but what may still turn out
        to end the block (the beginning of the close tag), so that a stream reads what the whole
        parse reads."""
        return len(body) - held_length(body, (self.close_tag,)) if self.close_tag else len(body)

    def glue(self, text: str, final: bool):
        """What the text right after a call is: ``WAIT`` (it may still be syntax), ``CONTENT_FOLLOWS``,
        the length of syntax to drop (here: a section closing tag and the whitespace before it), or
        ``(length,)``: that much glue, then a block that opens without a tag (llama3_json's next call)."""
        closing = self.section_tags[1]
        rest = text.lstrip(JSON_WHITESPACE)
        tag = next((tag for tag in closing if rest.startswith(tag)), None)
        if tag is not None:
            return len(text) - len(rest) + len(tag)
        if not final and any(tag.startswith(rest) for tag in closing):
            return WAIT
        return CONTENT_FOLLOWS

    def call_reader(self, opener: str, parameters: dict[str, dict] | None):
        """A reader (partial.py) of the calls of a block still being written, or None: then the calls
        come out when the block ends."""
        return None

    @classmethod
    def stream(cls, tools=None, reasoning=True, starts_in_reasoning=False):
        """The state machine that parses one output in this format."""
        return TaggedStream(cls(), tools, reasoning, starts_in_reasoning)

    def parse_block(self, opener: str, body: str, parameters: dict[str, dict] | None) -> list[ParsedCall] | None:
        """The calls in a block's body (its text without the closing tag), or None if the block
        cannot be read (it is then content)."""
        raise NotImplementedError


class TaggedStream:
    """Feeds text through reasoning, content, sections and call blocks (see the module docstring)."""

    def __init__(self, fmt: TaggedFormat, tools=None, reasoning=True, starts_in_reasoning=False):
        self.format = fmt
        self.parameters = tool_parameters(tools)
        self.reasoning_tags = fmt.reasoning_tags if reasoning else None
        self.content_tags = fmt.call_tags + fmt.section_tags[0] + (self.reasoning_tags or ())[:1]
        self.glued = bool(fmt.section_tags[1]) or fmt.bare_start  # whether text after a call may be syntax
        self.mode = START if fmt.bare_start else CONTENT
        if self.reasoning_tags and starts_in_reasoning:
            self.mode = OPENED
        self.buffer = ""
        self.opener = ""
        self.block_prefix = ""  # the section tag and glue before an open block, content again if it is malformed
        self.block_memo: dict = {}
        self.reader = None  # the open block's call reader
        self.sink = DeltaSink()
        self.block_calls = BlockCalls(self.sink, self.parameters)
        # Content goes through it: whitespace alone beside a call (and the format's edge whitespace) is dropped.
        self.runs = BlankRuns(self.sink, fmt.edge_whitespace)
        self.finished = False

    def feed(self, text: str, final: bool = False) -> list[dict]:
        if self.finished:
            raise RuntimeError("feed() after the stream was finished with final=True")
        self.buffer += text
        step = {START: self._start, CONTENT: self._content, REASONING: self._reasoning, SECTION: self._section,
                BLOCK: self._block, AFTER_CALL: self._after_call, OPENED: self._opened}
        while step[self.mode](final):
            pass
        if final:
            self.runs.end_run(by_call=False)
            self.finished = True
        return self.sink.take()

    def _start(self, final: bool) -> bool:
        """The start of a bare-block format: whitespace is content; a block may open at the first character."""
        rest = self.buffer.lstrip(JSON_WHITESPACE)
        self.runs.content(self.buffer[:len(self.buffer) - len(rest)])
        self.buffer = rest
        if not rest and not final:
            return False
        self.mode = CONTENT
        if self.format.bare_start and rest.startswith("{"):
            self._open_block("", "")
        return True

    def _opened(self, final: bool) -> bool:
        """The prompt opened reasoning: an opening tag the model writes again first (after whitespace)
        is syntax, as vLLM's reasoning parsers take it (tests/reasoning/test_deepseekr1_reasoning_parser.py)."""
        rest = self.buffer.lstrip(JSON_WHITESPACE)
        opening = self.reasoning_tags[0]
        if not final and opening.startswith(rest):
            return False
        if rest.startswith(opening):
            self.buffer = rest[len(opening):]
        self.mode = REASONING
        return True

    def _content(self, final: bool) -> bool:
        text, tag, self.buffer = next_tag(self.buffer, self.content_tags, final)
        self.runs.content(text)
        if tag is None:
            return False
        if self.reasoning_tags and tag == self.reasoning_tags[0]:
            self.runs.end_run(by_call=False, by_reasoning=True)
            self.mode = REASONING
        elif tag in self.format.call_tags:
            self._open_block(tag, "")
        else:
            self.mode, self.opener = SECTION, tag
        return True

    def _reasoning(self, final: bool) -> bool:
        close = self.reasoning_tags[1]
        ends = (close, *self.format.section_tags[0]) if self.format.reasoning_ends_at_section else (close,)
        text, tag, rest = next_tag(self.buffer, ends, final)
        if tag is not None and tag != close:
            if close in rest:  # the block closes later: the section tag is reasoning text
                self.sink.reasoning(text + tag)
                self.buffer = rest
                return True
            # Unclosed so far: held until the close tag (reasoning after all) or the end (the block ends here).
            self.sink.reasoning(text)
            self.buffer = tag + rest
            if not final:
                return False
        else:
            self.sink.reasoning(text)
            self.buffer = rest
            if tag is None:
                return False
        self.runs.start_run(after_call=False)
        self.mode = CONTENT
        return True

    def _section(self, final: bool) -> bool:
        """After a section opening tag (``self.opener``): a call tag after whitespace makes it syntax."""
        rest = self.buffer.lstrip(JSON_WHITESPACE)
        glue = self.buffer[:len(self.buffer) - len(rest)]
        tag = next((tag for tag in self.format.call_tags if rest.startswith(tag)), None)
        if tag is not None:
            self.buffer = rest[len(tag):]
            self._open_block(tag, self.opener + glue)
            return True
        if not final and any(tag.startswith(rest) for tag in self.format.call_tags):
            return False
        self.runs.content(self.opener)
        self.mode = CONTENT
        return True

    def _block(self, final: bool) -> bool:
        end = self.format.block_end(self.opener, self.buffer, final, self.block_memo)
        if end == REJECT:  # not a block after all: its opener is text, and what follows is scanned again
            self.runs.content(self.block_prefix + self.opener)
            self.mode = CONTENT
            return True
        if end is None:
            self._read_calls(self.buffer[:self.format.readable(self.opener, self.buffer)])
            return False
        body_end, block_end = end
        body, block, self.buffer = self.buffer[:body_end], self.buffer[:block_end], self.buffer[block_end:]
        self._read_calls(body)
        if self.block_calls.finish(self.format.parse_block(self.opener, body, self.parameters)):
            self.runs.end_run(by_call=True)
            self.runs.start_run(after_call=True)
            self.mode = AFTER_CALL if self.glued else CONTENT
        else:
            self.runs.content(self.block_prefix + self.opener + block)
            self.mode = CONTENT
        return True

    def _after_call(self, final: bool) -> bool:
        answer = self.format.glue(self.buffer, final)
        if answer == WAIT:
            return False
        self.mode = CONTENT
        if isinstance(answer, tuple):  # glue, then a block that opens without a tag
            glue_length, = answer
            glue, self.buffer = self.buffer[:glue_length], self.buffer[glue_length:]
            self._open_block("", glue)
        elif answer != CONTENT_FOLLOWS:
            self.buffer = self.buffer[answer:]
        return True

    def _read_calls(self, body: str) -> None:
        """Passes on what the call reader can read of the open block's body so far."""
        if self.reader is not None:
            self.block_calls.update(self.reader.read(body, len(body)))

    def _open_block(self, opener: str, prefix: str) -> None:
        self.opener, self.block_prefix, self.mode, self.block_memo = opener, prefix, BLOCK, {}
        self.reader = self.format.call_reader(opener, self.parameters)
