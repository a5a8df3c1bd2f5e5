"""Delta debugging over a Jinja template: the fewest statements, branches and text that still diverge.

A chat divergence found on a 200-line template is shown by the few lines that cause it. The template
is split into a tree of its own source text: text, ``{{ ... }}`` expressions, ``{# ... #}`` comments,
lone statements (``{% set x = 1 %}``) and blocks (``{% if %}...{% elif %}...{% else %}...{% endif %}``,
``for``, ``macro``, ``generation``, ...) whose branches hold subtrees. Shrinking removes whole nodes
(a block with its end tag, so the source stays balanced), replaces a block by one of its branches'
bodies (``{% if c %}A{% else %}B{% endif %}`` -> ``A``), drops a block's ``elif``/``else`` branches,
removes the tokens of an expression that can go (a filter, a slice, one side of an ``and``) and
shortens text; a candidate is tried only when jinja2, as transformers configures it, compiles it:

    >>> shrink_template("{% if x %}{{ 'a' }}{% else %}b{% endif %}tail", lambda s: "'a'" in s)
    "{{ 'a' }}"

A source the splitter cannot read back (an unclosed tag) is returned as it is.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..delta import ddmin

# Statement keywords that open a block closed by ``end<keyword>``; ``set`` only in its block form.
BLOCK_KEYWORDS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape", "generation",
                            "set", "trans"})
MIDDLE_KEYWORDS = {"if": ("elif", "else"), "for": ("else",)}
_KEYWORD = re.compile(r"\{%[-+]?\s*(\w+)")
CLAUSE_OPENERS = frozenset({"|", "[", "(", ".", "and", "or", "not", "if", "else", "+", "~", "-", "*", "==", "!=", "in"})
MAX_CLAUSE = 6  # tokens removed with an opener at most: "| replace('a', 'b')" is six
PASSES = 3  # whole passes over a template: a second one rarely finds more than the first's leftovers
_BLOCK_SET = re.compile(r"\{%[-+]?\s*set\s+[\w.]+\s*[-+]?%\}$")  # ``{% set x %}`` (no ``=``) opens a block


@dataclass(frozen=True)
class Block:
    """A statement block: its opening tag, its branches (each a body, after the first a middle tag
    such as ``{% else %}`` opening it) and its end tag."""

    opening: str
    branches: tuple[tuple[str, tuple], ...]  # (tag opening the branch, "" for the first; body nodes)
    closing: str

    def source(self) -> str:
        return self.opening + "".join(tag + source_of(body) for tag, body in self.branches) + self.closing


Node = "str | Block"  # a str is text, an expression, a comment or a lone statement, verbatim


def source_of(nodes) -> str:
    return "".join(n if isinstance(n, str) else n.source() for n in nodes)


def _pieces(source: str) -> list[str]:
    """The source cut into text and whole tags (quoted strings inside a tag may hold its delimiters).
    Raises ValueError at an unclosed tag."""
    pieces, text_start, i = [], 0, 0
    closers = {"{{": "}}", "{%": "%}", "{#": "#}"}
    while i < len(source):
        opener = source[i:i + 2]
        if opener not in closers:
            i += 1
            continue
        if text_start < i:
            pieces.append(source[text_start:i])
        end, quote = i + 2, None
        while True:
            if end >= len(source):
                raise ValueError(f"unclosed {opener} at offset {i}")
            char = source[end]
            if quote:
                quote = None if char == quote else quote
                end += 2 if char == "\\" else 1
                continue
            if char in "'\"" and opener != "{#":
                quote = char
            elif source.startswith(closers[opener], end):
                break
            end += 1
        end += 2
        pieces.append(source[i:end])
        if _keyword(source[i:end]) == "raw":
            close = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}").search(source, end)
            if close is None:
                raise ValueError(f"unclosed raw block at offset {i}")
            pieces[-1] = source[i:close.end()]
            end = close.end()
        i = text_start = end
    if text_start < len(source):
        pieces.append(source[text_start:])
    return pieces


def _keyword(piece: str) -> str | None:
    found = _KEYWORD.match(piece)
    return found.group(1) if found else None


def _opens_block(piece: str, keyword: str | None) -> bool:
    if keyword not in BLOCK_KEYWORDS or piece.startswith(("{{", "{#")):
        return False
    return keyword != "set" or bool(_BLOCK_SET.match(piece))


def parse(source: str) -> tuple:
    """The template's tree; ``source_of(parse(s)) == s``. Raises ValueError where tags do not balance."""
    pieces = _pieces(source)
    position = 0

    def nodes_until(keyword: str | None) -> tuple[tuple, str | None]:
        """Nodes up to a middle or end tag of the block ``keyword`` (which is consumed and returned)."""
        nonlocal position
        nodes = []
        while position < len(pieces):
            piece = pieces[position]
            position += 1
            word = _keyword(piece) if piece.startswith("{%") else None
            if keyword and word in (f"end{keyword}", *MIDDLE_KEYWORDS.get(keyword, ())):
                return tuple(nodes), piece
            if word and word.startswith("end"):
                raise ValueError(f"{piece!r} closes nothing open")
            if piece.startswith("{%") and _opens_block(piece, word):
                branches, tag = [], ""
                while True:
                    body, ending = nodes_until(word)
                    if ending is None:
                        raise ValueError(f"{piece!r} is never closed")
                    branches.append((tag, body))
                    if _keyword(ending) == f"end{word}":
                        break
                    tag = ending
                nodes.append(Block(piece, tuple(branches), ending))
            else:
                nodes.append(piece)
        return tuple(nodes), None

    return nodes_until(None)[0]


def compiles(source: str) -> bool:
    """Whether transformers' jinja2 environment compiles ``source``."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    try:
        _compile_jinja_template(source)
    except Exception:  # noqa: BLE001 - any refusal (a syntax error, an unknown tag) makes a candidate invalid
        return False
    return True


def shrink_template(source: str, still_fails: Callable[[str], bool]) -> str:
    """The smallest template found that compiles and on which ``still_fails`` holds (see the module):
    shrunk again while a pass still shrinks it (an expression made smaller can free a statement),
    at most PASSES times."""
    def fails(nodes) -> bool:
        candidate = source_of(nodes)
        return compiles(candidate) and still_fails(candidate)

    for _ in range(PASSES):
        try:
            tree = parse(source)
        except ValueError:
            return source
        smaller = source_of(_shrink_nodes(tuple(tree), fails))
        if smaller == source:
            break
        source = smaller
    return source


def _shrink_nodes(nodes: tuple, fails: Callable[[tuple], bool]) -> tuple:
    """``nodes`` (the whole tree, as ``fails`` sees it) with nodes removed, blocks replaced by a
    branch (and the removal tried again over the nodes that brings in), then each node shrunk."""
    if fails(()):
        return ()
    nodes = tuple(ddmin(list(nodes), lambda kept: fails(tuple(kept))))
    index = 0
    while index < len(nodes):
        node = nodes[index]

        def put(replacement: tuple, at=index) -> tuple:
            return nodes[:at] + replacement + nodes[at + 1:]
        if isinstance(node, Block):
            chosen = next((body for _, body in node.branches if fails(put(body))), None)
            if chosen is not None:
                return _shrink_nodes(put(chosen), fails)
            block = _shrink_block(node, lambda smaller: fails(put((smaller,))))
            opening = _smaller_tag(block.opening, lambda tag: fails(put((replace(block, opening=tag),))))
            nodes = put((replace(block, opening=opening),))
        elif node.startswith(("{{", "{%")):
            nodes = put((_smaller_tag(node, lambda tag: fails(put((tag,)))),))
        elif not node.startswith("{#"):
            nodes = put((ddmin(node, lambda text: fails(put((text,)))),))
        index += 1
    return nodes


def _smaller_tag(tag: str, fails: Callable[[str], bool]) -> str:
    """A tag with the expression tokens that can go removed (each with the space before it): a filter,
    a slice, one side of an ``and``: ``{{ a | trim }}`` becomes ``{{ a }}`` where ``fails`` (which
    compiles each candidate) still holds of that; a tag jinja2's lexer cannot read is returned as it is."""
    import jinja2

    try:
        tokens = list(jinja2.Environment().lex(tag))
    except jinja2.TemplateSyntaxError:
        return tag
    if len(tokens) < 3 or not tokens[0][1].endswith("_begin") or not tokens[-1][1].endswith("_end"):
        return tag
    head, space, pieces = tokens[0][2], "", []  # pieces: each token with the space before it
    for _, kind, value in tokens[1:-1]:
        if kind != "whitespace":
            pieces.append(space + value)
            space = ""
        elif pieces:
            space += value
        else:
            head += value
    tail = space + tokens[-1][2]

    def fails_with(smaller: list[str]) -> bool:
        return fails(head + "".join(smaller) + tail)
    kept = list(ddmin(pieces, fails_with))
    # ddmin removes single tokens; a filter ("| trim"), a subscript ("[1:]") or a clause ("and x")
    # goes only with the tokens after the one that opens it.
    index = 0
    while index < len(kept):
        opens = kept[index].strip() in CLAUSE_OPENERS
        width = next((w for w in range(2, MAX_CLAUSE + 1) if opens and index + w <= len(kept)
                      and fails_with(kept[:index] + kept[index + w:])), None)
        if width is None:
            index += 1
        else:
            kept = kept[:index] + kept[index + width:]
    return head + "".join(kept) + tail


def _shrink_block(block: Block, fails: Callable[[Block], bool]) -> Block:
    """The block with the branches that can go dropped (never the first) and each body shrunk."""
    for tag, body in list(block.branches[1:]):
        smaller = replace(block, branches=tuple(b for b in block.branches if b != (tag, body)))
        if fails(smaller):
            block = smaller
    for number in range(len(block.branches)):
        def with_body(body: tuple, at=number, current=block) -> Block:
            branches = list(current.branches)
            branches[at] = (branches[at][0], body)
            return replace(current, branches=tuple(branches))
        shrunk = _shrink_nodes(block.branches[number][1], lambda body: fails(with_body(body)))
        block = with_body(shrunk)
    return block

