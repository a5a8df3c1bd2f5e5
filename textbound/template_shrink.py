"""Delta debugging over a Jinja template: the fewest statements, branches and text that still diverge.

A chat divergence found on a 200-line template is shown by the few lines that cause it. The template
is split into a tree of its own source text: text, ``{{ ... }}`` expressions, ``{# ... #}`` comments,
lone statements (``{% set x = 1 %}``) and blocks (``{% if %}...{% elif %}...{% else %}...{% endif %}``,
``for``, ``macro``, ``generation``, ...) whose branches hold subtrees. Shrinking removes whole nodes
(a block with its end tag, so the source stays balanced), replaces a block by one of its branches'
bodies (``{% if c %}A{% else %}B{% endif %}`` -> ``A``), drops a block's ``elif``/``else`` branches,
and shortens text; a candidate is tried only when jinja2, as transformers configures it, compiles it:

    >>> shrink_template("{% if x %}{{ 'a' }}{% else %}b{% endif %}tail", lambda s: "'a'" in s)
    "{{ 'a' }}"

A source the splitter cannot read back (an unclosed tag) is returned as it is.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from .delta import ddmin

# Statement keywords that open a block closed by ``end<keyword>``; ``set`` only in its block form.
BLOCK_KEYWORDS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape", "generation",
                            "set", "trans"})
MIDDLE_KEYWORDS = {"if": ("elif", "else"), "for": ("else",)}
_KEYWORD = re.compile(r"\{%[-+]?\s*(\w+)")
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
    """The smallest template found that compiles and on which ``still_fails`` holds (see the module)."""
    try:
        tree = parse(source)
    except ValueError:
        return source

    def fails(nodes) -> bool:
        candidate = source_of(nodes)
        return compiles(candidate) and still_fails(candidate)

    return source_of(_shrink_nodes(tuple(tree), fails))


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
            nodes = put((_shrink_block(node, lambda block: fails(put((block,)))),))
        elif not node.startswith(("{{", "{%", "{#")):
            nodes = put((ddmin(node, lambda text: fails(put((text,)))),))
        index += 1
    return nodes


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

