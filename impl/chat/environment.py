"""The Jinja environment a chat template runs in, as transformers builds it.

Sandboxed and immutable, with trim_blocks and lstrip_blocks, loop controls and the ``{% generation %}``
tag, plus the names transformers adds: ``raise_exception``, ``strftime_now``, a ``tojson`` that keeps
non-ASCII text, and restricted ``dict`` and ``namespace``. Each template source is compiled once.

    >>> DEFAULT_ENVIRONMENT.compile("{{ 'é' | tojson }}{% if true %}\\nx{% endif %}").render()
    '"é"x'
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.exceptions import SecurityError, TemplateError

from .sandbox import ChatSandbox, RenderLimits, render_within_limits

# Where a render is, so that {% generation %} can tell where its text starts: the blocks the template
# has produced so far and the (start, end) spans of generated text. None when nobody asks.
_tracking: ContextVar[tuple[list[str], list[tuple[int, int]]] | None] = ContextVar("chat_generation_spans",
                                                                                 default=None)


class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` renders its body and notes where it landed."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation", []), [], [], body).set_lineno(lineno)

    def _generation(self, caller) -> str:
        text = caller()
        tracking = _tracking.get()
        if tracking is not None:
            # Like transformers: the start is what the top-level render has emitted so far, which
            # is exact unless the tag sits inside a macro or a captured block.
            blocks, spans = tracking
            start = len("".join(blocks))
            spans.append((start, start + len(text)))
        return text


def _raise_exception(message):
    raise TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # Jinja's own tojson escapes HTML characters; chat templates need the text as the model saw it.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format):
    # Looks up this module's ``datetime`` at each call, so a test can freeze the clock by replacing it.
    return datetime.now().strftime(format)


class _TemplateDict:
    """``dict(...)`` and ``dict.fromkeys(...)``, and nothing else of the builtin type."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """jinja2's namespace, refusing attribute names that start with an underscore."""

    def __init__(*args, **kwargs):
        # The first parameter is positional-only in spirit, so that namespace(self=1) still works.
        self, args = args[0], args[1:]
        attributes = dict(*args, **kwargs)
        for name in attributes:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attributes)

    def __setitem__(self, name, value):
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name):
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(f"chat templates cannot store underscore-prefixed attributes on a namespace, "
                                f"but got {name!r}")


class ChatEnvironment:
    """A sandboxed environment with its resource limits, and the templates compiled in it (each once).

    >>> ChatEnvironment().compile("{{ 'é' | tojson }}{% if true %}\\nx{% endif %}").render()
    '"é"x'
    """

    def __init__(self, limits: RenderLimits | None = None):
        self.limits = limits if limits is not None else RenderLimits()
        self.jinja = ChatSandbox(limits=self.limits, trim_blocks=True, lstrip_blocks=True,
                                 extensions=[GenerationTag, jinja2.ext.loopcontrols])
        self.jinja.filters["tojson"] = _tojson
        self.jinja.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now,
                                  dict=_TemplateDict(), namespace=_TemplateNamespace)
        self.jinja.safe_attributes[_TemplateDict] = frozenset({"fromkeys"})
        self.compile = lru_cache(maxsize=256)(self._compile)

    def _compile(self, source: str) -> jinja2.Template:
        # A syntax error raises jinja2's TemplateSyntaxError, as in transformers.
        if not isinstance(source, str):
            raise TypeError(f"a chat template is a str, not {type(source).__name__}")
        return self.jinja.from_string(source)

    def render(self, template: jinja2.Template, context: dict) -> str:
        return render_within_limits(template, context, self.limits)

    def render_with_generation_spans(self, template: jinja2.Template,
                                     context: dict) -> tuple[str, list[tuple[int, int]]]:
        """The text and the (start, end) character spans the ``{% generation %}`` blocks produced.

        >>> env = ChatEnvironment()
        >>> env.render_with_generation_spans(env.compile("a{% generation %}bc{% endgeneration %}"), {})
        ('abc', [(1, 3)])
        """
        blocks: list[str] = []
        spans: list[tuple[int, int]] = []
        token = _tracking.set((blocks, spans))
        try:
            text = render_within_limits(_Recording(template, blocks), context, self.limits)
        finally:
            _tracking.reset(token)
        return text, spans


class _Recording:
    """A template whose render also keeps the pieces produced so far, for {% generation %}."""

    def __init__(self, template: jinja2.Template, blocks: list[str]):
        self.environment = template.environment
        self._template = template
        self._blocks = blocks

    def generate(self, context: dict):
        for block in self._template.generate(context):
            self._blocks.append(block)
            yield block


DEFAULT_ENVIRONMENT = ChatEnvironment()


@lru_cache(maxsize=256)
def template_literal_text(source: str) -> str:
    """The template's raw text and string constants, joined by NULs so no search spans two of them.

    >>> sorted(template_literal_text("<s>{{ '[INST]' }}").split("\\0"))
    ['<s>', '[INST]']
    """
    tree = DEFAULT_ENVIRONMENT.jinja.parse(source)
    literals = {node.data for node in tree.find_all(jinja2.nodes.TemplateData)}
    literals |= {node.value for node in tree.find_all(jinja2.nodes.Const) if isinstance(node.value, str)}
    return "\0".join(literals)


@contextmanager
def frozen_clock(moment: datetime):
    """Make ``strftime_now`` read ``moment`` (for comparisons with an oracle frozen the same way)."""
    global datetime
    real = datetime

    class _Frozen(real):
        @classmethod
        def now(cls, tz=None):
            return moment

    datetime = _Frozen
    try:
        yield
    finally:
        datetime = real
