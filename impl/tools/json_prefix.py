"""How much of a growing JSON object's text can be passed on already: the longest prefix that
closing characters alone (a quote, then brackets) turn into valid JSON.

A streamed call's arguments go out as the model writes them, but only up to such a point, so that a
call whose output breaks off can still be closed into valid JSON without inventing a value:

>>> scan = JsonPrefix(0)
>>> text = '{"city": "Par'
>>> scan.run(text), text[:scan.closable], scan.closers()
(None, '{"city": "Par', '"}')
>>> text = '{"city": "Paris", "da'            # a key without its value cannot be closed
>>> scan.run(text), text[:scan.closable], scan.closers()
(None, '{"city": "Paris"', '}')
>>> scan.run('{"city": "Paris", "days": 3} tail')   # where the object ends
28
>>> closers_for('{"a": [1, {"b": tr')   # a literal is passed on only when whole
Traceback (most recent call last):
...
ValueError: not a closable JSON object prefix: '{"a": [1, {"b": tr'
"""
from __future__ import annotations

import regex

JSON_WHITESPACE = " \t\n\r"  # what JSON allows between tokens
_ESCAPES = set('"\\/bfnrt')
_HEX = set("0123456789abcdefABCDEF")
_DIGITS = set("0123456789")
_LITERALS = {"t": "rue", "f": "alse", "n": "ull"}
_STRING_SPECIAL = regex.compile(r'["\\\x00-\x1f]')  # what ends a run of plain characters in a string

# Where the reader stands. Values: the states in which the text so far can be closed.
(TOP, VALUE, KEY_OR_END, KEY, COLON, VALUE_OR_END, AFTER_VALUE, STRING, KEY_STRING, ESCAPE, UNICODE,
 MINUS, ZERO, INTEGER, DOT, FRACTION, EXPONENT, EXPONENT_SIGN, EXPONENT_DIGITS, LITERAL, DONE, BROKEN) = range(22)
_CLOSABLE = frozenset({KEY_OR_END, VALUE_OR_END, AFTER_VALUE, STRING, ZERO, INTEGER, FRACTION, EXPONENT_DIGITS, DONE})
_NUMBER_END = frozenset({ZERO, INTEGER, FRACTION, EXPONENT_DIGITS})  # a number may stop here


class JsonPrefix:
    """Reads one JSON object (with ``any_value``, any JSON value) that starts at ``start`` of a text
    that grows between calls to ``run`` (each text extends the one before), once per character
    however often it is called.

    ``closable`` is the end of the longest prefix that ``closers()`` make valid JSON (``start`` while
    there is none); reading stops for good at the object's end or at the first character that JSON
    does not allow there (the prefix read until then stays closable)."""

    def __init__(self, start: int, any_value: bool = False):
        self.start = self.position = self.closable = start
        self.any_value = any_value  # any JSON value may stand at the top, not only an object
        self.state = TOP
        self._last_unread = False  # the character that ended a top-level number is not the value's
        self.brackets: list[str] = []  # the closing bracket of each open container, innermost last
        self.string_return = AFTER_VALUE  # where a string's closing quote leads
        self.pending = ""  # the characters a literal (true, false, null) or a \\u escape still needs
        self.escape_from = STRING  # the string an escape sequence is in
        self._closable_in_string = False
        self._closable_brackets: list[str] = []

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def broken(self) -> bool:
        """Whether a character JSON does not allow there has been read."""
        return self.state == BROKEN

    @property
    def number_at_end(self) -> bool:
        """Whether the text read so far ends a whole top-level number (it is a value if the text ends)."""
        return self.state in _NUMBER_END and not self.brackets

    def closers(self) -> str:
        """What closes the text up to ``closable`` (a quote if it ends inside a string, then brackets)."""
        quote = '"' if self._closable_in_string else ""
        return quote + "".join(reversed(self._closable_brackets))

    def run(self, text: str, end: int | None = None) -> int | None:
        """Reads ``text`` up to ``end`` (default: all of it); returns the object's end once it is whole."""
        end = len(text) if end is None else end
        index = self.position
        while index < end and self.state not in (DONE, BROKEN):
            if self.state in (STRING, KEY_STRING):  # a run of plain characters at once
                special = _STRING_SPECIAL.search(text, index, end)
                run_end = end if special is None else special.start()
                if self.state == STRING and run_end > index:
                    self._mark_closable(run_end)
                index = run_end
                if special is None:
                    break
            self._step(text[index])
            index += 1 - self._last_unread
            if self.state in _CLOSABLE:
                self._mark_closable(index)
        self.position = index
        return index if self.state == DONE else None

    def _mark_closable(self, index: int) -> None:
        self.closable = index
        self._closable_in_string = self.state == STRING
        self._closable_brackets = list(self.brackets)

    def _step(self, char: str) -> None:
        state = self.state
        if state in (STRING, KEY_STRING):
            if char == '"':
                self.state = self.string_return
            elif char == "\\":
                self.escape_from, self.state = state, ESCAPE
            elif char < " ":
                self.state = BROKEN
        elif state == ESCAPE:
            if char == "u":
                self.pending, self.state = "xxxx", UNICODE
            else:
                self.state = self.escape_from if char in _ESCAPES else BROKEN
        elif state == UNICODE:
            self.pending = self.pending[1:]
            self.state = BROKEN if char not in _HEX else (UNICODE if self.pending else self.escape_from)
        elif state == LITERAL:
            if char != self.pending[0]:
                self.state = BROKEN
            else:
                self.pending = self.pending[1:]
                if not self.pending:
                    self._value_done()
        elif state in (MINUS, ZERO, INTEGER, DOT, FRACTION, EXPONENT, EXPONENT_SIGN, EXPONENT_DIGITS):
            self._number(char)
        elif char in JSON_WHITESPACE:
            return
        elif state == TOP:
            if self.any_value:
                self._value(char)
            else:
                self._open(char) if char == "{" else self._break()
        elif state in (VALUE, VALUE_OR_END):
            if state == VALUE_OR_END and char == "]":
                self._close(char)
            else:
                self._value(char)
        elif state in (KEY_OR_END, KEY):
            if char == '"':
                self.string_return, self.state = COLON, KEY_STRING
            elif state == KEY_OR_END and char == "}":
                self._close(char)
            else:
                self._break()
        elif state == COLON:
            self.state = VALUE if char == ":" else BROKEN
        elif state == AFTER_VALUE:
            if char == ",":
                self.state = KEY if self.brackets[-1] == "}" else VALUE
            elif char == self.brackets[-1]:
                self._close(char)
            else:
                self._break()

    def _value(self, char: str) -> None:
        if char in "{[":
            self._open(char)
        elif char == '"':
            self.string_return, self.state = AFTER_VALUE if self.brackets else DONE, STRING
        elif char == "-":
            self.state = MINUS
        elif char in _DIGITS:
            self.state = ZERO if char == "0" else INTEGER
        elif char in _LITERALS:
            self.pending, self.state = _LITERALS[char], LITERAL
        else:
            self._break()

    def _number(self, char: str) -> None:
        state = self.state
        if char in _DIGITS:
            following = {MINUS: INTEGER, INTEGER: INTEGER, DOT: FRACTION, FRACTION: FRACTION, EXPONENT: EXPONENT_DIGITS,
                         EXPONENT_SIGN: EXPONENT_DIGITS, EXPONENT_DIGITS: EXPONENT_DIGITS}
            self.state = following.get(state, BROKEN)  # a digit after a leading zero is not JSON
            if state == MINUS and char == "0":
                self.state = ZERO
        elif char == "." and state in (ZERO, INTEGER):
            self.state = DOT
        elif char in "eE" and state in (ZERO, INTEGER, FRACTION):
            self.state = EXPONENT
        elif char in "+-" and state == EXPONENT:
            self.state = EXPONENT_SIGN
        elif state in _NUMBER_END and not self.brackets:
            self.state, self._last_unread = DONE, True  # a top-level number ended before this character
        elif state in _NUMBER_END:
            self.state = AFTER_VALUE  # the number ended; the character belongs to what follows
            self._step(char)
        else:
            self._break()

    def _open(self, char: str) -> None:
        self.brackets.append("}" if char == "{" else "]")
        self.state = KEY_OR_END if char == "{" else VALUE_OR_END

    def _value_done(self) -> None:
        self.state = AFTER_VALUE if self.brackets else DONE

    def _close(self, char: str) -> None:
        self.brackets.pop()
        self.state = AFTER_VALUE if self.brackets else DONE

    def _break(self) -> None:
        self.state = BROKEN


def closers_for(text: str) -> str:
    """What closes ``text``, a closable prefix of a JSON object ("" needs ``{}``)."""
    if not text:
        return "{}"
    scan = JsonPrefix(0)
    if scan.run(text) is None and scan.closable != len(text):
        raise ValueError(f"not a closable JSON object prefix: {text!r}")
    return scan.closers()
