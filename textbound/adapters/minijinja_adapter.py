"""Chat templates rendered by MiniJinja (the Rust engine several servers embed) as an ``--impl``.

    textbound check --impl textbound.adapters.minijinja_adapter --component chat

Only the template engine is swapped: the request is prepared and finished exactly as transformers'
``apply_chat_template`` does it (messages copied to plain data without None values, reasoning
aliased, ``continue_final_message`` tagged and cut: impl.chat.ChatRenderer, which follows it), and
the template runs in a MiniJinja environment given transformers' environment as far as MiniJinja
allows:

- ``trim_blocks`` and ``lstrip_blocks`` on, Python-compatible methods (``pycompat``: ``.strip()``,
  ``.items()``...), loop controls (MiniJinja has them built in);
- ``raise_exception(message)`` raising jinja2's TemplateError, ``strftime_now(format)`` reading
  the local clock, a ``tojson`` filter with transformers' arguments (``ensure_ascii=False``,
  ``indent``, ``separators``, ``sort_keys``) instead of MiniJinja's HTML-escaping one;
- ``{% generation %}`` blocks (transformers' extension, which MiniJinja cannot parse) rendered
  as plain blocks, as transformers does when no assistant mask is asked for;
- errors named as jinja2 names them where the cause is the same (an undefined value, or a method
  a value lacks: ``jinja2.exceptions.UndefinedError``; a syntax error: ``TemplateSyntaxError``);
  other MiniJinja errors stay ``minijinja.TemplateError``.

Everything else (how values print, which methods and filters exist, undefined values) is
MiniJinja's own: that is what the field report measures.

Server entry point: none of MiniJinja's own: the servers embedding it (mistral.rs, TGI, Dynamo,
SGLang's gateway) each prepare a request their own way, checked through adapters of their own.
Here MiniJinja's render replaces jinja2 under transformers' preparation only, so a divergence is
the template engine's.

    >>> render_chat("{{ messages[0].content | tojson }}", [{"role": "user", "content": "é"}])
    '"é"'
"""
from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime

import jinja2


from . import engine_version, render_chat_through, require

minijinja = require("minijinja")

__version__ = engine_version("minijinja")
# ``{%- generation -%}`` and its end, whitespace control kept: they become an always-true if.
GENERATION_TAG = re.compile(r"(\{%[-+]?\s*)(end)?generation(\s*[-+]?%\})")
LINE_NUMBER = re.compile(r"\(in [^:()]*:(\d+)\)")  # where MiniJinja's message says the error is


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _strftime_now(format):
    return datetime.now().strftime(format)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    separators = tuple(separators) if separators is not None else None
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def without_generation_tags(source: str) -> str:
    """The template with transformers' ``{% generation %}`` blocks as plain blocks.

    >>> without_generation_tags("{%- generation %}x{% endgeneration -%}")
    '{%- if true %}x{% endif -%}'
    """
    return GENERATION_TAG.sub(lambda m: f"{m[1]}{'endif' if m[2] else 'if true'}{m[3]}", source)


class MiniJinjaEnvironment:
    """What impl.chat.ChatRenderer needs of an environment (compile, render), in MiniJinja."""

    def __init__(self):
        self.engine = minijinja.Environment(trim_blocks=True, lstrip_blocks=True, pycompat=True)
        self.engine.add_filter("tojson", _tojson)
        self.engine.add_global("raise_exception", _raise_exception)
        self.engine.add_global("strftime_now", _strftime_now)
        self._names: dict[str, str] = {}

    def compile(self, source: str) -> str:
        """The name the template is registered under (each source parsed once)."""
        if not isinstance(source, str):
            raise TypeError(f"a chat template is a str, not {type(source).__name__}")
        name = self._names.get(source)
        if name is None:
            name = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
            self._translated(lambda: self.engine.add_template(name, without_generation_tags(source)))
            self._names[source] = name
        return name

    def render(self, name: str, context: dict) -> str:
        return self._translated(lambda: self.engine.render_template(name, **context))

    @staticmethod
    def _translated(call):
        """``call()``, with MiniJinja's errors renamed where jinja2 has a class for the same cause."""
        try:
            return call()
        except minijinja.TemplateError as exc:
            kind, first_line = str(exc).split(":", 1)[0], str(exc).splitlines()[0]
            if kind == "syntax error":
                line = LINE_NUMBER.search(first_line)
                raise jinja2.exceptions.TemplateSyntaxError(first_line, int(line[1]) if line else 1) from exc
            if kind == "undefined value":
                raise jinja2.exceptions.UndefinedError(first_line) from exc
            raise
        except AttributeError as exc:  # a method a Python value lacks (pycompat calls into Python)
            raise jinja2.exceptions.UndefinedError(str(exc)) from exc


render_chat = render_chat_through(MiniJinjaEnvironment())
